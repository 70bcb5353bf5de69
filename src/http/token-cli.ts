import { parseArgs } from 'node:util';
import { loadConfigOrExit, parseOptions, refuseCommandLine } from '../command-line.js';
import { readOrCreateDevelopmentSecret, signDevelopmentToken } from './dev-token.js';

const USAGE = `Usage: node dist/http/token-cli.js [subject] [hours]
       node dist/http/token-cli.js [--sub NAME] [--scope SCOPES]… [--aud AUDIENCE] [--iss ISSUER] [--ttl DURATION]
       npm run --silent token -- [options or subject and hours]

Prints a bearer token (HS256) signed with AUTH_JWT_SECRET; in development without one, with the secret under
DATA_DIR that the service uses. Needs no database.

  subject, --sub NAME   the token's sub, recorded as the actor of every change (default: developer)
  hours                 how long the token is valid, in hours (default: 12)
  --ttl DURATION        how long the token is valid: seconds, or a number with s, m, h or d (e.g. 30m, 8h)
  --scope SCOPES        the token's scope claim; scopes separated by spaces or commas, the option repeatable
                        (what AUTH_REQUIRED_SCOPES_READ / _WRITE ask for)
  --aud AUDIENCE        the aud claim (default: AUTH_JWT_AUDIENCE)
  --iss ISSUER          the iss claim (default: AUTH_JWT_ISSUER)
`;

const SECONDS_PER_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `30m`, `8h`, `2d` in whole seconds, or undefined for anything else. */
function durationSeconds(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text);
  if (!match) return undefined;
  const seconds = Math.round(Number(match[1]) * SECONDS_PER_UNIT[match[2] || 's']!);
  return seconds >= 1 ? seconds : undefined;
}

function readCommandLine(args: string[]): {
  subject: string;
  expiresInSeconds: number;
  scopes: string[];
  audience?: string;
  issuer?: string;
} {
  const { values, positionals } = parseOptions(
    () =>
      parseArgs({
        args,
        allowPositionals: true,
        strict: true,
        options: {
          help: { type: 'boolean', short: 'h' },
          sub: { type: 'string' },
          scope: { type: 'string', multiple: true },
          aud: { type: 'string' },
          iss: { type: 'string' },
          ttl: { type: 'string' },
        },
      }),
    USAGE,
  );
  const extra = positionals[2];
  if (extra !== undefined) refuseCommandLine(`Unexpected argument '${extra}'.`, USAGE);
  const [positionalSubject, hours] = positionals;
  if (positionalSubject !== undefined && values.sub !== undefined) {
    refuseCommandLine('Give the subject either as an argument or with --sub, not both.', USAGE);
  }
  if (hours !== undefined && values.ttl !== undefined) {
    refuseCommandLine('Give the lifetime either as hours or with --ttl, not both.', USAGE);
  }
  const subject = values.sub ?? positionalSubject ?? 'developer';
  if (subject.trim() === '') refuseCommandLine('The subject must not be blank.', USAGE);

  let expiresInSeconds = 12 * 3600;
  if (hours !== undefined) {
    expiresInSeconds = Math.round(Number(hours) * 3600);
    if (!Number.isFinite(expiresInSeconds) || expiresInSeconds < 1) {
      refuseCommandLine(`The hours must be a positive number, not '${hours}'.`, USAGE);
    }
  } else if (values.ttl !== undefined) {
    const seconds = durationSeconds(values.ttl);
    if (seconds === undefined) {
      refuseCommandLine(`The --ttl must be a duration such as 3600, 30m, 8h or 2d, not '${values.ttl}'.`, USAGE);
    }
    expiresInSeconds = seconds;
  }
  const scopes = (values.scope ?? []).flatMap((list) => list.split(/[\s,]+/)).filter(Boolean);
  for (const [name, value] of [
    ['--aud', values.aud],
    ['--iss', values.iss],
  ] as const) {
    if (value !== undefined && value.trim() === '') refuseCommandLine(`The ${name} must not be blank.`, USAGE);
  }
  return { subject, expiresInSeconds, scopes, audience: values.aud, issuer: values.iss };
}

/** `npm run token`: prints a fresh token on stdout and nothing else, so that TOKEN=$(…) can take it. */
const request = readCommandLine(process.argv.slice(2));
const config = loadConfigOrExit({ opensDatabase: false });
const providerSetting = config.auth.publicKey
  ? 'AUTH_JWT_PUBLIC_KEY'
  : config.auth.jwksUrl
    ? 'AUTH_JWKS_URL'
    : config.auth.oidcIssuerUrl && 'AUTH_OIDC_ISSUER_URL';
if (providerSetting) {
  process.stderr.write(`${providerSetting} is configured: tokens come from your identity provider\n`);
  process.exit(1);
}
const { maxLifetimeSeconds } = config.auth;
if (maxLifetimeSeconds !== undefined && request.expiresInSeconds > maxLifetimeSeconds) {
  process.stderr.write(
    `A token for ${request.expiresInSeconds} s would be refused: AUTH_MAX_TOKEN_LIFETIME_SECONDS allows ${maxLifetimeSeconds} s\n`,
  );
  process.exit(1);
}
const secret = config.auth.secret ?? (await readOrCreateDevelopmentSecret(config.dataDir));
process.stdout.write(
  `${signDevelopmentToken(secret, {
    subject: request.subject,
    expiresInSeconds: request.expiresInSeconds,
    issuer: request.issuer ?? config.auth.issuer,
    audience: request.audience ?? config.auth.audience,
    ...(request.scopes.length > 0 && { scope: [...new Set(request.scopes)].join(' ') }),
  })}\n`,
);
