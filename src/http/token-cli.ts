import { loadConfig } from '../config.js';
import { readOrCreateDevelopmentSecret, signDevelopmentToken } from './dev-token.js';

/**
 * `npm run token [subject] [hours]`: prints a fresh HS256 token for AUTH_JWT_SECRET, or for the development
 * secret under DATA_DIR when none is configured.
 */
// The token needs no database: DATABASE_URL is not required of it.
const config = loadConfig(process.env, { opensDatabase: false });
if (config.auth.publicKey) {
  process.stderr.write('AUTH_JWT_PUBLIC_KEY is configured: tokens come from your identity provider\n');
  process.exit(1);
}
const [subject = 'developer', hours = '12'] = process.argv.slice(2);
const secret = config.auth.secret ?? (await readOrCreateDevelopmentSecret(config.dataDir));
process.stdout.write(
  `${signDevelopmentToken(secret, {
    subject,
    expiresInSeconds: Math.round(Number(hours) * 3600) || 43_200,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  })}\n`,
);
