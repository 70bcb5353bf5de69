import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createIdentity } from '../../src/auth/identity.js';
import { createEmptyDatabase } from '../support/empty-database.js';
import { runCommand, type CommandOutcome } from '../support/command.js';
import { ensureBuilt, PROJECT_ROOT } from '../support/service-process.js';

/** `npm run token` and `npm run migrate` as the image runs them: compiled JS under dist/, plain node. */
const SECRET = 'operator-commands-secret-0123456789abc';
const TOKEN_CLI = path.join(PROJECT_ROOT, 'dist', 'http', 'token-cli.js');
const MIGRATE_CLI = path.join(PROJECT_ROOT, 'dist', 'db', 'migrate-cli.js');
const TOKEN_USAGE_FIRST_LINE = 'Usage: node dist/http/token-cli.js [subject] [hours]\n';
const MIGRATE_USAGE_FIRST_LINE = 'Usage: node dist/db/migrate-cli.js\n';
const NO_DATABASE =
  'Invalid configuration: DATABASE_URL: is required in production ' +
  '(or EMBEDDED_POSTGRES=true for an embedded PostgreSQL with its data under DATA_DIR)\n';

let workDir: string;
/** A DATA_DIR that must stay absent: a development token command would create its secret there. */
let dataDir: string;

beforeAll(async () => {
  await ensureBuilt();
  workDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-commands-'));
  dataDir = path.join(workDir, 'data');
}, 180_000);

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('node dist/http/token-cli.js (npm run token)', () => {
  it.each([[['--help']], [['-h']], [['alice', '--help']]])(
    'prints the usage on stdout for %j, exits 0 and mints no token or secret',
    async (args) => {
      const outcome = await runCommand([TOKEN_CLI, ...args], { DATA_DIR: dataDir });
      expect(outcome.code).toBe(0);
      expect(outcome.stdout.startsWith(TOKEN_USAGE_FIRST_LINE)).toBe(true);
      expect(outcome.stdout).not.toMatch(/eyJ/);
      expect(outcome.stderr).toBe('');
      expect(existsSync(dataDir)).toBe(false);
    },
  );

  it.each([
    [['--subject', 'alice'], "Unknown option '--subject'."],
    [['alice', '8', 'extra'], "Unexpected argument 'extra'."],
    [['alice', 'soon'], "The hours must be a positive number, not 'soon'."],
    [['alice', '0'], "The hours must be a positive number, not '0'."],
    [[' '], 'The subject must not be blank.'],
    [['--sub'], "Option '--sub <value>' argument missing"],
    [['--ttl', 'soon'], "The --ttl must be a duration such as 3600, 30m, 8h or 2d, not 'soon'."],
    [['--ttl', '0s'], "The --ttl must be a duration such as 3600, 30m, 8h or 2d, not '0s'."],
    [['alice', '--sub', 'bob'], 'Give the subject either as an argument or with --sub, not both.'],
    [['alice', '1', '--ttl', '1h'], 'Give the lifetime either as hours or with --ttl, not both.'],
    [['--aud', ''], 'The --aud must not be blank.'],
  ])('refuses %j with exit 2, saying why and how it is called, minting nothing', async (args, problem) => {
    const outcome = await runCommand([TOKEN_CLI, ...args], { DATA_DIR: dataDir });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.startsWith(`${problem}\n\n${TOKEN_USAGE_FIRST_LINE}`)).toBe(true);
    expect(outcome.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('prints only a token for the subject and hours, in production without any database setting', async () => {
    const outcome = await runCommand([TOKEN_CLI, 'alice', '8'], { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET });
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    expect(outcome.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const claims = jwt.verify(outcome.stdout.trim(), SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims.sub).toBe('alice');
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(8 * 3600);
  });

  it('is what npm run --silent token runs on a built checkout, printing only the token', async () => {
    const outcome = await runCommand(
      ['run', '--silent', 'token', '--', 'alice', '1'],
      { AUTH_JWT_SECRET: SECRET },
      'npm',
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(jwt.verify(outcome.stdout.trim(), SECRET)).toMatchObject({ sub: 'alice' });
  });

  it('takes a subject that starts with a dash after --', async () => {
    const outcome = await runCommand([TOKEN_CLI, '--', '-robot-', '1'], { AUTH_JWT_SECRET: SECRET });
    expect(outcome.code).toBe(0);
    expect(jwt.verify(outcome.stdout.trim(), SECRET)).toMatchObject({ sub: '-robot-' });
  });

  it('mints the sub, scopes, aud, iss and lifetime given as options (issue 28)', async () => {
    const outcome = await runCommand(
      [TOKEN_CLI, '--sub', 'robot-7', '--scope', 'inventory.read inventory.write', '--scope=inventory.audit'].concat([
        '--aud',
        'inventory-api',
        '--iss',
        'https://id.example/',
        '--ttl',
        '30m',
      ]),
      { AUTH_JWT_SECRET: SECRET },
    );
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    const claims = jwt.verify(outcome.stdout.trim(), SECRET, {
      algorithms: ['HS256'],
      audience: 'inventory-api',
      issuer: 'https://id.example/',
    }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ sub: 'robot-7', scope: 'inventory.read inventory.write inventory.audit' });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(30 * 60);
  });

  it('mints a token the service accepts where an issuer, an audience and scopes are required', async () => {
    const environment = {
      AUTH_JWT_SECRET: SECRET,
      AUTH_JWT_ISSUER: 'https://id.example/',
      AUTH_JWT_AUDIENCE: 'inventory-api',
      AUTH_REQUIRED_SCOPES_WRITE: 'inventory.write',
    };
    const outcome = await runCommand(
      [TOKEN_CLI, '--sub', 'alice', '--scope', 'inventory.write', '--ttl', '3600'],
      environment,
    );
    expect(outcome.code).toBe(0);
    const identity = createIdentity(loadConfig({ ...environment, NODE_ENV: 'test' }, { opensDatabase: false }).auth);
    expect(await identity.verify(outcome.stdout.trim())).toMatchObject({
      subject: 'alice',
      scopes: ['inventory.write'],
    });
  });

  it('exits 1 instead of printing a token the service would refuse as living too long', async () => {
    const outcome = await runCommand([TOKEN_CLI, 'alice', '2'], {
      AUTH_JWT_SECRET: SECRET,
      AUTH_MAX_TOKEN_LIFETIME_SECONDS: '3600',
    });
    expect(outcome).toStrictEqual({
      code: 1,
      stdout: '',
      stderr: 'A token for 7200 s would be refused: AUTH_MAX_TOKEN_LIFETIME_SECONDS allows 3600 s\n',
    });
  });

  it('exits 1 naming the missing key in production without AUTH_JWT_SECRET', async () => {
    const outcome = await runCommand([TOKEN_CLI, 'alice'], { NODE_ENV: 'production' });
    expect(outcome).toStrictEqual({
      code: 1,
      stdout: '',
      stderr:
        'Invalid configuration: AUTH_JWT_SECRET: is required in production (or AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL or AUTH_OIDC_ISSUER_URL)\n',
    });
  });
});

describe('node dist/db/migrate-cli.js (npm run migrate)', () => {
  it('prints the usage on stdout for --help and exits 0 without opening a database', async () => {
    const outcome = await runCommand([MIGRATE_CLI, '--help'], { DATA_DIR: dataDir });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout.startsWith(MIGRATE_USAGE_FIRST_LINE)).toBe(true);
    expect(outcome.stderr).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it.each([
    [['--dry-run'], "Unknown option '--dry-run'."],
    [['up'], "Unexpected argument 'up'."],
  ])('refuses %j with exit 2, saying why and how it is called', async (args, problem) => {
    const outcome = await runCommand([MIGRATE_CLI, ...args], { DATA_DIR: dataDir });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.startsWith(`${problem}\n\n${MIGRATE_USAGE_FIRST_LINE}`)).toBe(true);
    expect(outcome.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('exits 1 naming DATABASE_URL and EMBEDDED_POSTGRES in production without DATABASE_URL', async () => {
    const outcome = await runCommand([MIGRATE_CLI], {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: SECRET,
      DATA_DIR: dataDir,
    });
    expect(outcome).toStrictEqual({ code: 1, stdout: '', stderr: NO_DATABASE });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('applies every migration to an empty DATABASE_URL, and then finds the schema up to date', async () => {
    const database = await createEmptyDatabase();
    try {
      const environment = { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET, DATABASE_URL: database.url };
      const messages = (outcome: CommandOutcome): unknown[] =>
        outcome.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { msg: unknown }).msg);

      const first = await runCommand([MIGRATE_CLI], environment);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(messages(first).at(-1)).toBe('migrations applied');
      const second = await runCommand([MIGRATE_CLI], environment);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(messages(second).at(-1)).toBe('schema is up to date');
    } finally {
      await database.drop();
    }
  }, 60_000);
});
