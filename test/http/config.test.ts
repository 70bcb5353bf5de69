import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { rsaKeyPair } from '../support/jwt.js';

const SECRET = 'a-secret-that-is-long-enough-for-production';
const DATABASE = 'postgres://inventory@db:5432/inventory';

function configError(environment: Record<string, string>): ConfigError {
  try {
    loadConfig(environment);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(environment)}`);
}

describe('loadConfig defaults (D26)', () => {
  it('reads an empty environment as development on port 8080 with embedded PostgreSQL under ./data', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 8080,
      databaseUrl: undefined,
      dataDir: path.resolve('data'),
      embeddedPostgresPort: 0,
      logLevel: 'info',
      bodies: {
        limit: { text: '1mb', bytes: 1_048_576 },
        bulkLimit: { text: '64mb', bytes: 67_108_864 },
        budget: { text: '64mb', bytes: 67_108_864 },
        importLimit: { text: '1gb', bytes: 1_073_741_824 },
        importMaxConcurrent: 2,
        importStallTimeoutMs: 30_000,
        importMinBytesPerSecond: 1024,
        importMinRateWindowMs: 30_000,
      },
      trustProxy: false,
      mixedLoadUnits: false,
      idempotencyTtlSeconds: 86_400,
    });
    expect(config.auth).toStrictEqual({
      secret: undefined,
      publicKey: undefined,
      issuer: undefined,
      audience: undefined,
      maxLifetimeSeconds: undefined,
      requiredScopes: { read: [], write: [] },
      oidcIssuerUrl: undefined,
      jwksUrl: undefined,
      jwksRefreshSeconds: 300,
      scopeClaims: ['scope', 'scp'],
    });
  });

  it('publishes no events without AMQP_URL, names the exchange inventory, and keeps events a week (D28, D29)', () => {
    expect(loadConfig({}).events).toStrictEqual({
      amqpUrl: undefined,
      exchange: 'inventory',
      retentionHours: 168,
      partitionSize: 1_000_000,
    });
  });

  it('reads the event settings', () => {
    const config = loadConfig({
      AMQP_URL: 'amqps://user:secret@broker.example:5671/vhost',
      AMQP_EXCHANGE: 'wms.inventory',
      EVENTS_RETENTION_HOURS: '24',
      EVENTS_PARTITION_SIZE: '50000',
    });
    expect(config.events).toStrictEqual({
      amqpUrl: 'amqps://user:secret@broker.example:5671/vhost',
      exchange: 'wms.inventory',
      retentionHours: 24,
      partitionSize: 50_000,
    });
  });

  it('keeps the ledger for ever and ended reservations 90 days unless told otherwise (D34)', () => {
    expect(loadConfig({}).history).toStrictEqual({ ledgerRetentionMonths: undefined, reservationRetentionDays: 90 });
    expect(loadConfig({ LEDGER_RETENTION_MONTHS: '24', RESERVATION_RETENTION_DAYS: '30' }).history).toStrictEqual({
      ledgerRetentionMonths: 24,
      reservationRetentionDays: 30,
    });
  });

  it('traces nothing without an OTLP endpoint (D36)', () => {
    expect(loadConfig({ OTEL_SERVICE_NAME: 'inventory', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).tracing).toBe(false);
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
  ])('traces with %o: %s (D36)', (environment, tracing) => {
    expect(loadConfig(environment).tracing).toBe(tracing);
  });

  it('runs one process unless WEB_CONCURRENCY says otherwise; auto is the cores available (issue 14)', () => {
    expect(loadConfig({}).webConcurrency).toBe(1);
    expect(loadConfig({ WEB_CONCURRENCY: '3' }).webConcurrency).toBe(3);
    expect(loadConfig({ WEB_CONCURRENCY: 'auto' }).webConcurrency).toBe(os.availableParallelism());
  });

  it('streams at most 4 lists at once, holds 1 MiB unsent per stream and 16 MiB in all, and cuts one that takes nothing for 30 s (D39)', () => {
    expect(loadConfig({}).streams).toStrictEqual({
      maxConcurrent: 4,
      stallTimeoutMs: 30_000,
      bufferBytes: 1048576,
      totalBufferBytes: 16777216,
    });
  });

  it('reads the stream settings', () => {
    const config = loadConfig({
      STREAM_MAX_CONCURRENT: '2',
      STREAM_STALL_MS: '5000',
      STREAM_BUFFER_BYTES: '65536',
      STREAM_BUFFER_TOTAL_BYTES: '8388608',
    });
    expect(config.streams).toStrictEqual({
      maxConcurrent: 2,
      stallTimeoutMs: 5000,
      bufferBytes: 65536,
      totalBufferBytes: 8388608,
    });
    expect(Object.isFrozen(config.streams)).toBe(true);
  });

  it('still reads STREAM_STALL_TIMEOUT_MS, the former name of STREAM_STALL_MS, when STREAM_STALL_MS is unset', () => {
    expect(loadConfig({ STREAM_STALL_TIMEOUT_MS: '7000' }).streams.stallTimeoutMs).toBe(7000);
    expect(loadConfig({ STREAM_STALL_TIMEOUT_MS: '7000', STREAM_STALL_MS: '9000' }).streams.stallTimeoutMs).toBe(9000);
  });

  it('resolves a relative DATA_DIR to an absolute path', () => {
    const config = loadConfig({ DATA_DIR: 'var/inventory' });
    expect(path.isAbsolute(config.dataDir)).toBe(true);
    expect(config.dataDir).toBe(path.join(process.cwd(), 'var', 'inventory'));
  });

  it('treats blank settings as unset', () => {
    const config = loadConfig({ PORT: '', LOG_LEVEL: '  ', TRUST_PROXY: '', AUTH_JWT_SECRET: '' });
    expect(config.port).toBe(8080);
    expect(config.logLevel).toBe('info');
    expect(config.trustProxy).toBe(false);
    expect(config.auth.secret).toBeUndefined();
  });

  it('is frozen so nothing can change it after start', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.auth)).toBe(true);
    expect(Object.isFrozen(config.db)).toBe(true);
  });

  it('reads every setting it is given', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      PORT: '9090',
      DATABASE_URL: 'postgresql://inv:pw@db:5432/inventory',
      AUTH_JWT_SECRET: SECRET,
      AUTH_JWT_ISSUER: 'https://idp.example',
      AUTH_JWT_AUDIENCE: 'inventory',
      AUTH_MAX_TOKEN_LIFETIME_SECONDS: '86400',
      LOG_LEVEL: 'debug',
      BODY_LIMIT: '512kb',
      BULK_BODY_LIMIT: '1.5gb',
      BODY_BUDGET: '4294967296',
      IMPORT_BODY_LIMIT: '20gb',
      IMPORT_MAX_CONCURRENT: '5',
      TRUST_PROXY: 'true',
      INVENTORY_MIXED_LOADUNITS: 'true',
    });
    expect(config).toMatchObject({
      env: 'production',
      port: 9090,
      databaseUrl: 'postgresql://inv:pw@db:5432/inventory',
      auth: { secret: SECRET, issuer: 'https://idp.example', audience: 'inventory', maxLifetimeSeconds: 86_400 },
      logLevel: 'debug',
      bodies: {
        limit: { text: '512kb', bytes: 524_288 },
        bulkLimit: { text: '1.5gb', bytes: 1_610_612_736 },
        budget: { text: '4294967296', bytes: 4_294_967_296 },
        importLimit: { text: '20gb', bytes: 21_474_836_480 },
        importMaxConcurrent: 5,
      },
      trustProxy: true,
      mixedLoadUnits: true,
    });
  });

  it('keeps the meaning BODY_LIMIT had before bulk operations had their own: set alone, it limits them too', () => {
    expect(loadConfig({ BODY_LIMIT: '256mb' }).bodies).toStrictEqual({
      limit: { text: '256mb', bytes: 268_435_456 },
      bulkLimit: { text: '256mb', bytes: 268_435_456 },
      budget: { text: '256mb', bytes: 268_435_456 },
      budgetWaitMs: 30_000,
      importLimit: { text: '1gb', bytes: 1_073_741_824 },
      importMaxConcurrent: 2,
      importStallTimeoutMs: 30_000,
      importMinBytesPerSecond: 1024,
      importMinRateWindowMs: 30_000,
    });
    expect(loadConfig({ BODY_LIMIT: '2mb', BULK_BODY_LIMIT: '8mb' }).bodies.bulkLimit.bytes).toBe(8 * 1_048_576);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['0', false],
    ['no', false],
  ])('reads the boolean TRUST_PROXY=%s as %s', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(expected);
    expect(loadConfig({ INVENTORY_MIXED_LOADUNITS: value }).mixedLoadUnits).toBe(expected);
  });

  it('restores the line breaks of a PEM public key that arrive escaped as \\n', () => {
    const { publicKey } = rsaKeyPair();
    const config = loadConfig({ AUTH_JWT_PUBLIC_KEY: publicKey.replace(/\n/g, '\\n') });
    expect(config.auth.publicKey).toBe(publicKey);
  });
});

describe('loadConfig refusals (D26)', () => {
  it('names every bad setting in one ConfigError', () => {
    const error = configError({ PORT: 'abc', LOG_LEVEL: 'loud', TRUST_PROXY: 'maybe', DATABASE_URL: 'mysql://x' });
    for (const name of ['PORT', 'LOG_LEVEL', 'TRUST_PROXY', 'DATABASE_URL']) expect(error.message).toContain(name);
    expect(error.name).toBe('ConfigError');
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['NODE_ENV', 'staging'],
    ['BODY_LIMIT', 'lots'],
    ['BULK_BODY_LIMIT', '64 megabytes'],
    ['BODY_BUDGET', '-1'],
    ['IMPORT_BODY_LIMIT', 'unlimited'],
    ['IMPORT_MAX_CONCURRENT', '0'],
    ['INVENTORY_MIXED_LOADUNITS', 'perhaps'],
    ['DB_POOL_MAX', '0'],
    ['AUTH_JWT_SECRET', 'short'],
    ['AMQP_URL', 'http://127.0.0.1:5672'],
    ['AMQP_URL', 'rabbit:5672'],
    ['AMQP_URL', 'amqp://'],
    ['AMQP_EXCHANGE', 'bad name'],
    ['EVENTS_RETENTION_HOURS', '0'],
    ['EVENTS_RETENTION_HOURS', 'a week'],
    ['EVENTS_PARTITION_SIZE', '999'],
    ['LEDGER_RETENTION_MONTHS', '0'],
    ['LEDGER_RETENTION_MONTHS', 'a year'],
    ['RESERVATION_RETENTION_DAYS', '0'],
    ['EVENTS_PARTITION_SIZE', 'large'],
    ['STREAM_MAX_CONCURRENT', '0'],
    ['STREAM_MAX_CONCURRENT', '2.5'],
    ['STREAM_MAX_CONCURRENT', 'many'],
    ['STREAM_STALL_TIMEOUT_MS', '0'],
    ['STREAM_STALL_TIMEOUT_MS', '30s'],
    ['STREAM_STALL_MS', '0'],
    ['STREAM_BUFFER_BYTES', '1000'],
    ['STREAM_BUFFER_BYTES', '1MB'],
    ['STREAM_BUFFER_TOTAL_BYTES', '65536'],
    ['IMPORT_STALL_TIMEOUT_MS', '0'],
    ['AUTH_MAX_TOKEN_LIFETIME_SECONDS', '30'],
    ['WEB_CONCURRENCY', '0'],
    ['WEB_CONCURRENCY', 'many'],
    ['AUTH_MAX_TOKEN_LIFETIME_SECONDS', 'a day'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'grpc://collector:4317'],
  ])('refuses %s=%s, naming it', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.message).toContain(name);
  });

  it.each([
    ['BULK_BODY_LIMIT', { BODY_LIMIT: '2mb', BULK_BODY_LIMIT: '1mb' }, 'must not be smaller than BODY_LIMIT'],
    ['BULK_BODY_LIMIT', { BULK_BODY_LIMIT: '512kb' }, 'must not be smaller than BODY_LIMIT'],
    ['BODY_BUDGET', { BODY_BUDGET: '32mb' }, 'must not be smaller than BULK_BODY_LIMIT'],
    [
      'HTTP_REQUEST_TIMEOUT_MS',
      { HTTP_REQUEST_TIMEOUT_MS: '15000' },
      'must not be smaller than HTTP_HEADERS_TIMEOUT_MS (20000)',
    ],
    [
      'HTTP_REQUEST_TIMEOUT_MS',
      { HTTP_REQUEST_TIMEOUT_MS: '15000', HTTP_HEADERS_TIMEOUT_MS: '15001' },
      'must not be smaller than HTTP_HEADERS_TIMEOUT_MS (15001)',
    ],
  ])('refuses a %s smaller than the limit below it (%o)', (name, environment, problem) => {
    expect(configError(environment).message).toBe(`Invalid configuration: ${name}: ${problem}`);
  });

  it('never repeats a refused AMQP_URL, which may carry a password, in the error', () => {
    const error = configError({ AMQP_URL: 'amqq://user:p4ssw0rd@broker' });
    expect(error.message).toContain('AMQP_URL');
    expect(error.message).not.toContain('p4ssw0rd');
  });

  it('never repeats a refused secret in the error', () => {
    const error = configError({ AUTH_JWT_SECRET: 'tooShortPw1' });
    expect(error.message).not.toContain('tooShortPw1');
  });

  it('refuses production without AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY', () => {
    const error = configError({ NODE_ENV: 'production' });
    expect(error.message).toMatch(/AUTH_JWT_SECRET/);
    expect(error.message).toMatch(/production/);
  });

  it('accepts production with a public key only', () => {
    const { publicKey } = rsaKeyPair();
    const config = loadConfig({ NODE_ENV: 'production', AUTH_JWT_PUBLIC_KEY: publicKey, DATABASE_URL: DATABASE });
    expect(config.auth.publicKey).toBe(publicKey);
  });

  it('refuses both a secret and a public key', () => {
    const error = configError({ AUTH_JWT_SECRET: SECRET, AUTH_JWT_PUBLIC_KEY: rsaKeyPair().publicKey });
    expect(error.message).toContain('AUTH_JWT_PUBLIC_KEY');
    expect(error.message).toContain(
      'AUTH_JWT_PUBLIC_KEY: set only one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL, AUTH_OIDC_ISSUER_URL, ' +
        'not AUTH_JWT_SECRET and AUTH_JWT_PUBLIC_KEY',
    );
  });
});

describe('loadConfig: where the data lives (issue 16)', () => {
  const PRODUCTION = { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET };

  it('refuses production without DATABASE_URL, naming it and EMBEDDED_POSTGRES', () => {
    expect(configError(PRODUCTION).message).toBe(
      'Invalid configuration: DATABASE_URL: is required in production ' +
        '(or EMBEDDED_POSTGRES=true for an embedded PostgreSQL with its data under DATA_DIR)',
    );
  });

  it('accepts production on the embedded PostgreSQL when EMBEDDED_POSTGRES=true asks for it', () => {
    expect(loadConfig({ ...PRODUCTION, EMBEDDED_POSTGRES: 'true' }).databaseUrl).toBeUndefined();
  });

  it('accepts production with DATABASE_URL', () => {
    expect(loadConfig({ ...PRODUCTION, DATABASE_URL: DATABASE }).databaseUrl).toBe(DATABASE);
  });

  it.each(['development', 'test'])('uses the embedded PostgreSQL in %s without being asked', (env) => {
    expect(loadConfig({ NODE_ENV: env }).databaseUrl).toBeUndefined();
  });

  it('refuses EMBEDDED_POSTGRES=false without DATABASE_URL, also in development', () => {
    expect(configError({ EMBEDDED_POSTGRES: 'false' }).message).toBe(
      'Invalid configuration: DATABASE_URL: is required with EMBEDDED_POSTGRES=false',
    );
  });

  it('uses DATABASE_URL whatever EMBEDDED_POSTGRES says', () => {
    for (const embedded of ['true', 'false']) {
      expect(loadConfig({ ...PRODUCTION, DATABASE_URL: DATABASE, EMBEDDED_POSTGRES: embedded }).databaseUrl).toBe(
        DATABASE,
      );
    }
  });

  it('refuses an EMBEDDED_POSTGRES that is no boolean', () => {
    expect(configError({ EMBEDDED_POSTGRES: 'perhaps' }).message).toBe(
      'Invalid configuration: EMBEDDED_POSTGRES: must be true or false',
    );
  });

  it('names a missing key and a missing database in one ConfigError', () => {
    const error = configError({ NODE_ENV: 'production' });
    expect(error.message).toMatch(
      /^Invalid configuration: AUTH_JWT_SECRET: .*; DATABASE_URL: is required in production/,
    );
  });

  it('requires no database setting of a command that opens no database (the token command)', () => {
    expect(loadConfig(PRODUCTION, { opensDatabase: false }).auth.secret).toBe(SECRET);
  });
});

describe('loadConfig: the read replica (issue 17)', () => {
  const REPLICA = 'postgres://reader@replica:5432/inventory';

  it('has no read replica without DATABASE_READ_URL', () => {
    expect(loadConfig({ DATABASE_URL: DATABASE }).readReplica).toBeUndefined();
  });

  it('reads DATABASE_READ_URL with a maximum lag of 5 s after any write unless told otherwise', () => {
    expect(loadConfig({ DATABASE_URL: DATABASE, DATABASE_READ_URL: REPLICA }).readReplica).toStrictEqual({
      url: REPLICA,
      maxLagMs: 5000,
      readsAfter: 'any-write',
    });
    const config = loadConfig({
      DATABASE_URL: DATABASE,
      DATABASE_READ_URL: REPLICA,
      DATABASE_READ_MAX_LAG_MS: '250',
      DATABASE_READ_AFTER: 'own-writes',
    });
    expect(config.readReplica).toStrictEqual({ url: REPLICA, maxLagMs: 250, readsAfter: 'own-writes' });
    expect(Object.isFrozen(config.readReplica)).toBe(true);
  });

  it.each([
    ['DATABASE_READ_URL', 'mysql://replica/inventory', 'must be a postgres:// or postgresql:// URL'],
    ['DATABASE_READ_MAX_LAG_MS', '0', 'Too small: expected number to be >=1'],
    ['DATABASE_READ_MAX_LAG_MS', '5s', 'Invalid input: expected number, received NaN'],
    [
      'DATABASE_READ_AFTER',
      'all',
      "must be 'any-write' (a replica serves a read once it has every write acknowledged before it) or " +
        "'own-writes' (only this instance's writes)",
    ],
  ])('refuses %s=%s, naming it', (name, value, message) => {
    expect(configError({ [name]: value }).message).toBe(`Invalid configuration: ${name}: ${message}`);
  });
});

describe('loadConfig: behind a transaction pooler (issue 17)', () => {
  const POOLER = 'postgres://inventory@pgbouncer:6432/inventory';

  it('connects straight to PostgreSQL by default: session mode, direct URL the same as DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: DATABASE });
    expect([config.db.poolMode, config.databaseDirectUrl]).toEqual(['session', DATABASE]);
  });

  it('reads the pooler, its mode and the direct URL', () => {
    const config = loadConfig({
      DATABASE_URL: POOLER,
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: DATABASE,
    });
    expect([config.databaseUrl, config.db.poolMode, config.databaseDirectUrl]).toEqual([
      POOLER,
      'transaction',
      DATABASE,
    ]);
  });

  it('refuses transaction mode without a direct URL, or with the pooler as the direct URL', () => {
    const expected =
      'Invalid configuration: DATABASE_DIRECT_URL: is required with DATABASE_POOL_MODE=transaction: ' +
      'a URL that reaches PostgreSQL itself, not the pooler';
    expect(configError({ DATABASE_URL: POOLER, DATABASE_POOL_MODE: 'transaction' }).message).toBe(expected);
    expect(
      configError({ DATABASE_URL: POOLER, DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: POOLER }).message,
    ).toBe(expected);
  });

  it('refuses statement mode, in which no transaction can span two statements', () => {
    expect(configError({ DATABASE_URL: POOLER, DATABASE_POOL_MODE: 'statement' }).message).toBe(
      "Invalid configuration: DATABASE_POOL_MODE: must be 'session' (PostgreSQL itself, or a session pooler) " +
        "or 'transaction' (a transaction pooler)",
    );
  });

  it('refuses the pooler settings with the embedded PostgreSQL, which has no pooler in front', () => {
    expect(configError({ DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: DATABASE }).message).toBe(
      'Invalid configuration: DATABASE_DIRECT_URL: is read only with DATABASE_URL; ' +
        'DATABASE_POOL_MODE: transaction needs DATABASE_URL (the pooler)',
    );
  });

  it('refuses a direct URL that is no postgres:// URL', () => {
    expect(configError({ DATABASE_URL: POOLER, DATABASE_DIRECT_URL: 'mysql://x' }).message).toBe(
      'Invalid configuration: DATABASE_DIRECT_URL: must be a postgres:// or postgresql:// URL',
    );
  });
});
