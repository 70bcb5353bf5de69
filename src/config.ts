import os from 'node:os';
import path from 'node:path';
import { checkAuthSettings } from './auth/settings.js';
import type { ReadsAfter } from './db/wal-positions.js';
import { z } from 'zod';
import { tracingRequested } from './tracing/settings.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const port = z.coerce.number().int().min(0).max(65535);
const positiveMillis = z.coerce.number().int().min(1).max(3_600_000);
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' });

/** A size as written in the environment, and in bytes. */
export interface ByteSize {
  readonly text: string;
  readonly bytes: number;
}

const BYTE_SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const BYTES_PER_UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Accepts what body-parser accepts: a byte count or a number with b/kb/mb/gb (of 1024). */
const byteSize = z
  .string()
  .regex(BYTE_SIZE, { message: "must be a size such as '64mb' or '1048576'" })
  .transform((text): ByteSize => {
    const [, amount, unit = 'b'] = BYTE_SIZE.exec(text)!;
    return { text, bytes: Math.floor(Number(amount) * BYTES_PER_UNIT[unit.toLowerCase()]!) };
  });

const DEFAULT_BODY_LIMIT: ByteSize = { text: '1mb', bytes: 1024 ** 2 };
const DEFAULT_BULK_BODY_LIMIT: ByteSize = { text: '64mb', bytes: 64 * 1024 ** 2 };
const DEFAULT_IMPORT_BODY_LIMIT: ByteSize = { text: '1gb', bytes: 1024 ** 3 };

/** `inventory.read inventory.audit` or `inventory.read,inventory.audit`. */
const scopeList = z
  .string()
  .optional()
  .transform((value) => (value ?? '').split(/[\s,]+/).filter(Boolean));

function httpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

const isHttpUrl = (value: string): boolean => httpUrl(value) !== undefined;

function isPublicBaseUrl(value: string): boolean {
  const url = httpUrl(value);
  return url !== undefined && url.search === '' && url.hash === '';
}

const otlpEndpoint = z.string().refine(isHttpUrl, { message: 'must be an http:// or https:// URL' }).optional();

/** An origin as a browser sends it: scheme, host and port only (no path, query, credentials or wildcard). */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.toLowerCase();
  } catch {
    return false;
  }
}

function isAmqpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'amqp:' || url.protocol === 'amqps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const environmentSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: port.default(8080),
    HOST: z.string().min(1).optional(),
    DATABASE_URL: postgresUrl.optional(),
    DATABASE_READ_URL: postgresUrl.optional(),
    DATABASE_READ_MAX_LAG_MS: positiveMillis.default(5000),
    DATABASE_READ_AFTER: z
      .enum(['any-write', 'own-writes'], {
        error:
          "must be 'any-write' (a replica serves a read once it has every write acknowledged before it) or " +
          "'own-writes' (only this instance's writes)",
      })
      .default('any-write'),
    DATABASE_DIRECT_URL: postgresUrl.optional(),
    DATABASE_POOL_MODE: z
      .enum(['session', 'transaction'], {
        error: "must be 'session' (PostgreSQL itself, or a session pooler) or 'transaction' (a transaction pooler)",
      })
      .default('session'),
    DATA_DIR: z.string().min(1).default('./data'),
    EMBEDDED_PG_PORT: port.default(0),
    DB_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
    WEB_CONCURRENCY: z
      .union([z.literal('auto'), z.coerce.number().int().min(1).max(64)], {
        error: "must be a number of processes from 1 to 64, or 'auto'",
      })
      .default(1)
      .transform((value) => (value === 'auto' ? os.availableParallelism() : value)),
    DB_CONNECT_TIMEOUT_MS: positiveMillis.default(5000),
    DB_LOCK_TIMEOUT_MS: positiveMillis.default(5000),
    DB_STATEMENT_TIMEOUT_MS: positiveMillis.default(120_000),
    AUTH_JWT_SECRET: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
    AUTH_JWT_PUBLIC_KEY: z.string().min(1).optional(),
    AUTH_JWT_ISSUER: z.string().min(1).optional(),
    AUTH_JWT_AUDIENCE: z.string().min(1).optional(),
    AUTH_MAX_TOKEN_LIFETIME_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(366 * 86_400)
      .optional(),
    AUTH_JWKS_URL: z.string().refine(isHttpUrl, { message: 'must be an http:// or https:// URL' }).optional(),
    AUTH_OIDC_ISSUER_URL: z.string().refine(isHttpUrl, { message: 'must be an http:// or https:// URL' }).optional(),
    AUTH_JWKS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    AUTH_SCOPE_CLAIMS: z
      .string()
      .default('scope,scp')
      .transform((value) => value.split(/[\s,]+/).filter(Boolean)),
    AUTH_REQUIRED_SCOPES_READ: scopeList,
    AUTH_REQUIRED_SCOPES_WRITE: scopeList,
    BROWSER_OIDC_CLIENT_ID: z.string().min(1).optional(),
    BROWSER_OIDC_SCOPES: z.string().min(1).default('openid offline_access'),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    BODY_LIMIT: byteSize.optional(),
    BULK_BODY_LIMIT: byteSize.optional(),
    BODY_BUDGET: byteSize.optional(),
    IMPORT_BODY_LIMIT: byteSize.optional(),
    IMPORT_MAX_CONCURRENT: z.coerce.number().int().min(1).max(1000).default(2),
    IMPORT_STALL_TIMEOUT_MS: positiveMillis.default(30_000),
    IMPORT_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(1024),
    IMPORT_MIN_RATE_WINDOW_MS: positiveMillis.default(30_000),
    BODY_BUDGET_WAIT_MS: positiveMillis.default(30_000),
    TRUST_PROXY: booleanFlag.default(false),
    PUBLIC_BASE_URL: z
      .string()
      .refine(isPublicBaseUrl, { message: 'must be an http:// or https:// URL without query or fragment' })
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
    ALLOWED_HOSTS: z
      .string()
      .optional()
      .transform((value) => value?.split(/[\s,]+/).filter(Boolean)),
    INVENTORY_MIXED_LOADUNITS: booleanFlag.default(false),
    SHUTDOWN_TIMEOUT_MS: positiveMillis.default(10_000),
    HTTP_HEADERS_TIMEOUT_MS: positiveMillis.default(20_000),
    HTTP_REQUEST_TIMEOUT_MS: positiveMillis.default(300_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveMillis.default(5_000),
    STREAM_MAX_CONCURRENT: z.coerce.number().int().min(1).max(1000).default(4),
    // D39: STREAM_STALL_MS; STREAM_STALL_TIMEOUT_MS is its former name, still read when the new one is unset.
    STREAM_STALL_MS: positiveMillis.optional(),
    STREAM_STALL_TIMEOUT_MS: positiveMillis.default(30_000),
    STREAM_BUFFER_BYTES: z.coerce
      .number()
      .int()
      .min(16 * 1024)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024),
    STREAM_BUFFER_TOTAL_BYTES: z.coerce
      .number()
      .int()
      .min(1024 * 1024)
      .max(4 * 1024 * 1024 * 1024)
      .default(16 * 1024 * 1024),
    COMPRESSION_LEVEL: z.coerce.number().int().min(1).max(9).default(1),
    EVENT_STREAMS_MAX: z.coerce.number().int().min(1).max(100_000).default(1000),
    EVENT_STREAMS_HEARTBEAT_MS: positiveMillis.default(15_000),
    CORS_ALLOWED_ORIGINS: z
      .string()
      .optional()
      .transform((value, ctx) => {
        const origins = (value ?? '').split(/[\s,]+/).filter(Boolean);
        for (const origin of origins) {
          if (!isOrigin(origin)) {
            ctx.addIssue({ code: 'custom', message: `'${origin}' is no origin (scheme://host[:port], nothing more)` });
          }
        }
        return origins.map((origin) => origin.toLowerCase());
      }),
    AMQP_URL: z
      .string()
      .refine(isAmqpUrl, { message: 'must be an amqp:// or amqps:// URL, e.g. amqp://guest:guest@127.0.0.1:5672' })
      .optional(),
    // RabbitMQ's own rule for names, which it would otherwise enforce only when the relay first connects.
    AMQP_EXCHANGE: z
      .string()
      .regex(/^[\w.:-]{1,255}$/, { message: 'must be 1–255 letters, digits, and the characters - _ . :' })
      .default('inventory'),
    EVENTS_RETENTION_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(10 * 365 * 24)
      .default(168),
    LEDGER_RETENTION_MONTHS: z.coerce.number().int().min(1).max(1200).optional(),
    RESERVATION_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
    EVENTS_PARTITION_SIZE: z.coerce.number().int().min(1000).max(1_000_000_000).default(1_000_000),
    IDEMPOTENCY_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(86_400),
    EMBEDDED_POSTGRES: booleanFlag.optional(),
    // The SDK reads every OTEL_* setting itself (D36); a mistyped endpoint is refused here, at start, by name.
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpEndpoint,
  })
  .superRefine((env, ctx) => {
    const bodies = bodyLimitsOf(env);
    if (bodies.bulkLimit.bytes < bodies.limit.bytes) {
      ctx.addIssue({ code: 'custom', path: ['BULK_BODY_LIMIT'], message: 'must not be smaller than BODY_LIMIT' });
    }
    if (bodies.budget.bytes < bodies.bulkLimit.bytes) {
      ctx.addIssue({ code: 'custom', path: ['BODY_BUDGET'], message: 'must not be smaller than BULK_BODY_LIMIT' });
    }
    // Node refuses to create a server whose headers may take longer than the whole request (issue 26).
    if (env.HTTP_REQUEST_TIMEOUT_MS < env.HTTP_HEADERS_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['HTTP_REQUEST_TIMEOUT_MS'],
        message: `must not be smaller than HTTP_HEADERS_TIMEOUT_MS (${env.HTTP_HEADERS_TIMEOUT_MS})`,
      });
    }
    checkAuthSettings(env, ctx);
    if (env.BROWSER_OIDC_CLIENT_ID && !env.AUTH_OIDC_ISSUER_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['BROWSER_OIDC_CLIENT_ID'],
        message: 'needs AUTH_OIDC_ISSUER_URL: the stock browser logs in at that provider',
      });
    }
  });

/**
 * Issue 16: where the data lives is chosen, never fallen into. Without DATABASE_URL the embedded PostgreSQL keeps it
 * under DATA_DIR, which a container loses when it is recreated: production uses it only when asked to. With
 * DATABASE_URL, EMBEDDED_POSTGRES is moot (WEB_CONCURRENCY workers get the URL of the embedded database their
 * primary started, along with the primary's EMBEDDED_POSTGRES=true).
 */
function checkDatabaseChoice(env: z.infer<typeof environmentSchema>, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string): void => ctx.addIssue({ code: 'custom', path: [path], message });
  if (env.DATABASE_URL) {
    // Through a transaction pooler the migrations' lock and the feed's LISTEN would silently lose their session.
    if (
      env.DATABASE_POOL_MODE === 'transaction' &&
      (!env.DATABASE_DIRECT_URL || env.DATABASE_DIRECT_URL === env.DATABASE_URL)
    ) {
      issue(
        'DATABASE_DIRECT_URL',
        'is required with DATABASE_POOL_MODE=transaction: a URL that reaches PostgreSQL itself, not the pooler',
      );
    }
    return;
  }
  if (env.DATABASE_DIRECT_URL) issue('DATABASE_DIRECT_URL', 'is read only with DATABASE_URL');
  if (env.DATABASE_POOL_MODE === 'transaction')
    issue('DATABASE_POOL_MODE', 'transaction needs DATABASE_URL (the pooler)');
  if (env.EMBEDDED_POSTGRES === false) {
    issue('DATABASE_URL', 'is required with EMBEDDED_POSTGRES=false');
  } else if (env.EMBEDDED_POSTGRES === undefined && env.NODE_ENV === 'production') {
    issue(
      'DATABASE_URL',
      'is required in production (or EMBEDDED_POSTGRES=true for an embedded PostgreSQL with its data under DATA_DIR)',
    );
  }
}

export interface LoadOptions {
  /** False for a command that opens no database (the token command): then no database setting is required. */
  readonly opensDatabase?: boolean;
}

/** Request bodies (README, Configuration). */
export interface BodyLimits {
  /** Of an operation on one resource. */
  readonly limit: ByteSize;
  /** Of a bulk operation (an array of resources). */
  readonly bulkLimit: ByteSize;
  /** What the bodies being read and handled at once may add up to; more wait their turn. */
  readonly budget: ByteSize;
  /** How long a bulk body waits for its turn before a 503. */
  readonly budgetWaitMs: number;
  /**
   * Of a streamed body (NDJSON import): read line by line and never held, so it takes no share of the budget; the
   * bound protects the database's disk and the length of the one transaction, not the service's memory.
   */
  readonly importLimit: ByteSize;
  /** Streamed imports a process runs at once: each holds a connection and a transaction for its whole upload. */
  readonly importMaxConcurrent: number;
  /** A streamed import whose client sends nothing for this long is cancelled (408). */
  readonly importStallTimeoutMs: number;
  /** A streamed import whose client sends slower than this over `importMinRateWindowMs` is cancelled (408, D38). */
  readonly importMinBytesPerSecond: number;
  readonly importMinRateWindowMs: number;
}

/**
 * BODY_LIMIT set alone keeps its former meaning, the one limit of every operation, so a deployment that raised
 * (or lowered) it for its bulk loads goes on as before.
 */
function bodyLimitsOf(env: {
  BODY_LIMIT?: ByteSize;
  BULK_BODY_LIMIT?: ByteSize;
  BODY_BUDGET?: ByteSize;
  BODY_BUDGET_WAIT_MS: number;
  IMPORT_BODY_LIMIT?: ByteSize;
  IMPORT_MAX_CONCURRENT: number;
  IMPORT_STALL_TIMEOUT_MS: number;
  IMPORT_MIN_BYTES_PER_SECOND: number;
  IMPORT_MIN_RATE_WINDOW_MS: number;
}): BodyLimits {
  const bulkLimit = env.BULK_BODY_LIMIT ?? env.BODY_LIMIT ?? DEFAULT_BULK_BODY_LIMIT;
  return {
    limit: env.BODY_LIMIT ?? DEFAULT_BODY_LIMIT,
    bulkLimit,
    budget: env.BODY_BUDGET ?? bulkLimit,
    budgetWaitMs: env.BODY_BUDGET_WAIT_MS,
    importLimit: env.IMPORT_BODY_LIMIT ?? DEFAULT_IMPORT_BODY_LIMIT,
    importMaxConcurrent: env.IMPORT_MAX_CONCURRENT,
    importStallTimeoutMs: env.IMPORT_STALL_TIMEOUT_MS,
    importMinBytesPerSecond: env.IMPORT_MIN_BYTES_PER_SECOND,
    importMinRateWindowMs: env.IMPORT_MIN_RATE_WINDOW_MS,
  };
}

export interface AuthConfig {
  /** HS256 secret; absent when a public key is configured or a development secret is still to be created. */
  readonly secret?: string;
  /** PEM public key for RS256 / ES256. */
  readonly publicKey?: string;
  readonly issuer?: string;
  readonly audience?: string;
  /** Tokens whose `exp` lies further than this after their `iat` (or now, without one) are refused. */
  readonly maxLifetimeSeconds?: number;
  readonly requiredScopes?: { readonly read: readonly string[]; readonly write: readonly string[] };
  /** D37: an OpenID Connect provider, found by discovery; or its key set directly (with `issuer`). */
  readonly oidcIssuerUrl?: string;
  readonly jwksUrl?: string;
  /** How old the provider's cached key set may grow before it is fetched again in the background. */
  readonly jwksRefreshSeconds: number;
  /** Dotted claim paths whose strings are the token's scopes (`scope`, `scp`, `roles`, `realm_access.roles`). */
  readonly scopeClaims: readonly string[];
}

export type PoolMode = 'session' | 'transaction';

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host?: string;
  readonly databaseUrl?: string;
  /** Issue 17: a streaming replica for reads, once it has what they must see (D41, src/db/read-replica.ts). */
  readonly readReplica?: {
    readonly url: string;
    /** Reads go to the primary while the replica is further behind than this. */
    readonly maxLagMs: number;
    /** D41: whose writes the replica must have replayed before it serves a read. */
    readonly readsAfter: ReadsAfter;
  };
  /**
   * Issue 17: where work that needs a session of its own connects (migrations under their advisory lock, the feed's
   * LISTEN): DATABASE_DIRECT_URL, else DATABASE_URL; undefined with the embedded database.
   */
  readonly databaseDirectUrl?: string;
  readonly dataDir: string;
  readonly embeddedPostgresPort: number;
  /** Worker processes on the port (issue 14); 1 runs the service in this process. */
  readonly webConcurrency: number;
  readonly db: {
    readonly poolMax: number;
    readonly connectTimeoutMs: number;
    readonly lockTimeoutMs: number;
    readonly statementTimeoutMs: number;
    /** `transaction`: DATABASE_URL is a transaction pooler, so no session state may outlive a transaction. */
    readonly poolMode: PoolMode;
  };
  readonly auth: AuthConfig;
  /** D37: the stock browser's login with the provider (a public client); unset, the page asks for a token. */
  readonly browserLogin?: { readonly issuer: string; readonly clientId: string; readonly scopes: string };
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly bodies: BodyLimits;
  readonly trustProxy: boolean;
  /** Issue 15: where hrefs point instead of the request's host, and which hosts a request may name. */
  readonly publicBaseUrl?: string;
  readonly allowedHosts?: readonly string[];
  readonly mixedLoadUnits: boolean;
  readonly shutdownTimeoutMs: number;
  /** Slow or stalled clients cannot hold sockets: headers, whole requests and idle keep-alives are bounded. */
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
  };
  /** Streamed lists: how many at once (per process). D39, every outgoing stream (lists, the feed, SSE): bytes it
   * may hold unsent, bytes all of them may hold together, and how long one may stay unable to send before its
   * connection is closed. */
  readonly streams: {
    readonly maxConcurrent: number;
    readonly stallTimeoutMs: number;
    readonly bufferBytes: number;
    readonly totalBufferBytes: number;
  };
  /** Issue 27: Server-Sent Event streams of the feed one process keeps open at once (one more is a 503), and how
   * long a quiet stream goes before a comment keeps it alive. */
  readonly eventStreams: { readonly maxConcurrent: number; readonly heartbeatMs: number };
  /** D33: zlib's level for gzip answers (1 fastest … 9 smallest). */
  readonly compressionLevel: number;
  /** D33: the origins whose browser pages may call the API (empty: no CORS headers at all). */
  readonly corsAllowedOrigins: readonly string[];
  /** How long a stored idempotent response is replayed. */
  readonly idempotencyTtlSeconds: number;
  /** D34: how long the ledger (whole months; unset: for ever) and ended reservations are kept. */
  readonly history: {
    readonly ledgerRetentionMonths: number | undefined;
    readonly reservationRetentionDays: number;
  };
  /** D28, D29: publishing to RabbitMQ (only with a URL) and how long the feed keeps events. */
  readonly events: {
    readonly amqpUrl?: string;
    readonly exchange: string;
    readonly retentionHours: number;
    /** Positions per part of the outbox (migration 0014): retention drops whole parts. */
    readonly partitionSize: number;
  };
  /** D36: OpenTelemetry tracing, on when an OTLP endpoint is set (src/tracing/settings.ts). */
  readonly tracing: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** PEM keys often arrive through environments with their line breaks escaped. */
function unescapePem(value: string): string {
  return value.includes('\\n') ? value.replace(/\\n/g, '\n') : value;
}

function blankToUndefined(source: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && value.trim() !== '') result[key] = value;
  }
  return result;
}

/** Reads the environment once; throws ConfigError naming every bad setting. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): Config {
  const schema =
    options.opensDatabase === false ? environmentSchema : environmentSchema.superRefine(checkDatabaseChoice);
  const parsed = schema.safeParse(blankToUndefined(source));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env = parsed.data;
  return Object.freeze({
    env: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    readReplica: env.DATABASE_READ_URL
      ? Object.freeze({
          url: env.DATABASE_READ_URL,
          maxLagMs: env.DATABASE_READ_MAX_LAG_MS,
          readsAfter: env.DATABASE_READ_AFTER,
        })
      : undefined,
    databaseDirectUrl: env.DATABASE_URL ? (env.DATABASE_DIRECT_URL ?? env.DATABASE_URL) : undefined,
    dataDir: path.resolve(env.DATA_DIR),
    embeddedPostgresPort: env.EMBEDDED_PG_PORT,
    webConcurrency: env.WEB_CONCURRENCY,
    db: Object.freeze({
      poolMax: env.DB_POOL_MAX,
      connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
      lockTimeoutMs: env.DB_LOCK_TIMEOUT_MS,
      statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
      poolMode: env.DATABASE_POOL_MODE,
    }),
    auth: Object.freeze({
      secret: env.AUTH_JWT_SECRET,
      publicKey: env.AUTH_JWT_PUBLIC_KEY ? unescapePem(env.AUTH_JWT_PUBLIC_KEY) : undefined,
      issuer: env.AUTH_JWT_ISSUER,
      audience: env.AUTH_JWT_AUDIENCE,
      maxLifetimeSeconds: env.AUTH_MAX_TOKEN_LIFETIME_SECONDS,
      requiredScopes: Object.freeze({ read: env.AUTH_REQUIRED_SCOPES_READ, write: env.AUTH_REQUIRED_SCOPES_WRITE }),
      oidcIssuerUrl: env.AUTH_OIDC_ISSUER_URL,
      jwksUrl: env.AUTH_JWKS_URL,
      jwksRefreshSeconds: env.AUTH_JWKS_REFRESH_SECONDS,
      scopeClaims: Object.freeze(env.AUTH_SCOPE_CLAIMS),
    }),
    browserLogin:
      env.BROWSER_OIDC_CLIENT_ID && env.AUTH_OIDC_ISSUER_URL
        ? Object.freeze({
            issuer: env.AUTH_OIDC_ISSUER_URL,
            clientId: env.BROWSER_OIDC_CLIENT_ID,
            scopes: env.BROWSER_OIDC_SCOPES,
          })
        : undefined,
    logLevel: env.LOG_LEVEL,
    bodies: Object.freeze(bodyLimitsOf(env)),
    trustProxy: env.TRUST_PROXY,
    publicBaseUrl: env.PUBLIC_BASE_URL,
    allowedHosts: env.ALLOWED_HOSTS,
    mixedLoadUnits: env.INVENTORY_MIXED_LOADUNITS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    http: Object.freeze({
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    }),
    streams: Object.freeze({
      maxConcurrent: env.STREAM_MAX_CONCURRENT,
      stallTimeoutMs: env.STREAM_STALL_MS ?? env.STREAM_STALL_TIMEOUT_MS,
      bufferBytes: env.STREAM_BUFFER_BYTES,
      totalBufferBytes: env.STREAM_BUFFER_TOTAL_BYTES,
    }),
    eventStreams: Object.freeze({
      maxConcurrent: env.EVENT_STREAMS_MAX,
      heartbeatMs: env.EVENT_STREAMS_HEARTBEAT_MS,
    }),
    compressionLevel: env.COMPRESSION_LEVEL,
    corsAllowedOrigins: Object.freeze(env.CORS_ALLOWED_ORIGINS),
    idempotencyTtlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
    history: Object.freeze({
      ledgerRetentionMonths: env.LEDGER_RETENTION_MONTHS,
      reservationRetentionDays: env.RESERVATION_RETENTION_DAYS,
    }),
    events: Object.freeze({
      amqpUrl: env.AMQP_URL,
      exchange: env.AMQP_EXCHANGE,
      retentionHours: env.EVENTS_RETENTION_HOURS,
      partitionSize: env.EVENTS_PARTITION_SIZE,
    }),
    tracing: tracingRequested(source),
  });
}
