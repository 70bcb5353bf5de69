import { loadConfigOrExit, parseCommandLine, refuseCommandLine } from '../command-line.js';
import { readOrCreateDevelopmentSecret, signDevelopmentToken } from './dev-token.js';

const USAGE = `Usage: node dist/http/token-cli.js [subject] [hours]
       npm run --silent token -- [subject] [hours]

Prints a bearer token (HS256) signed with AUTH_JWT_SECRET; in development without one, with the secret under
DATA_DIR that the service uses. Needs no database.

  subject  the token's sub, recorded as the actor of every change (default: developer)
  hours    how long the token is valid (default: 12)
`;

/** `npm run token`: prints a fresh token on stdout and nothing else, so that TOKEN=$(…) can take it. */
const [subject = 'developer', hours = '12'] = parseCommandLine(process.argv.slice(2), USAGE, 2);
if (subject.trim() === '') refuseCommandLine('The subject must not be blank.', USAGE);
const expiresInSeconds = Math.round(Number(hours) * 3600);
if (!Number.isFinite(expiresInSeconds) || expiresInSeconds < 1) {
  refuseCommandLine(`The hours must be a positive number, not '${hours}'.`, USAGE);
}
const config = loadConfigOrExit({ opensDatabase: false });
if (config.auth.publicKey) {
  process.stderr.write('AUTH_JWT_PUBLIC_KEY is configured: tokens come from your identity provider\n');
  process.exit(1);
}
const { maxLifetimeSeconds } = config.auth;
if (maxLifetimeSeconds !== undefined && expiresInSeconds > maxLifetimeSeconds) {
  process.stderr.write(
    `A token for ${hours} h would be refused: AUTH_MAX_TOKEN_LIFETIME_SECONDS allows ${maxLifetimeSeconds} s\n`,
  );
  process.exit(1);
}
const secret = config.auth.secret ?? (await readOrCreateDevelopmentSecret(config.dataDir));
process.stdout.write(
  `${signDevelopmentToken(secret, {
    subject,
    expiresInSeconds,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  })}\n`,
);
