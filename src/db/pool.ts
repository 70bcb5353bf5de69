import pg from 'pg';
import type { Logger } from 'pino';
import type { PoolMode } from '../config.js';

export interface PoolSettings {
  readonly poolMax: number;
  readonly connectTimeoutMs: number;
  readonly lockTimeoutMs: number;
  readonly statementTimeoutMs: number;
  readonly poolMode: PoolMode;
}

export const CLIENT_TIMEOUT_MARGIN_MS = 2000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/** Waiting forever on a lock or a runaway statement would hold a connection and a client hostage. */
function timeoutsOf(settings: PoolSettings): [name: string, ms: number][] {
  return [
    ['lock_timeout', settings.lockTimeoutMs],
    ['statement_timeout', settings.statementTimeoutMs],
    ['idle_in_transaction_session_timeout', IDLE_IN_TRANSACTION_TIMEOUT_MS],
  ];
}

interface TransactionPooledConfig extends pg.ClientConfig {
  /** `SET LOCAL …` for the timeouts, sent with every BEGIN. */
  readonly localSettings: string;
}

/**
 * A client behind a transaction pooler (issue 17: PgBouncer's pool_mode=transaction), where each transaction, and
 * each statement outside one, may run on another server connection. So nothing may outlive a transaction:
 * - no named prepared statements: one parsed on one server connection is unknown on the next (and PgBouncer 1.18
 *   does not track them). The names are dropped here, for every statement of the code, so the SQL keeps them for
 *   the direct case, where they save a parse per statement;
 * - no `options` startup parameter for the timeouts: a pooler cannot keep session settings, and PgBouncer refuses
 *   connections that send one. withTransaction sends them as `SET LOCAL` with its BEGIN (the same round trip);
 *   statements outside a transaction (single reads) run with the role's settings (README: Behind PgBouncer).
 */
export class TransactionPooledClient extends pg.Client {
  readonly localSettings: string;

  // pg.Pool constructs its clients with the pool's own options, where createPool put the settings.
  constructor(config: pg.ClientConfig = {}) {
    super(config);
    this.localSettings = (config as Partial<TransactionPooledConfig>).localSettings ?? '';
  }

  // pg's overloads all take the statement first; only a config object (not text, not a Submittable) has a name.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(statement: any, ...rest: any[]): any {
    const unnamed =
      typeof statement === 'object' && statement !== null && typeof statement.submit !== 'function' && statement.name
        ? { ...statement, name: undefined }
        : statement;
    return (pg.Client.prototype.query as (...args: unknown[]) => unknown).call(this, unnamed, ...rest);
  }
}

/** What a transaction on `client` must set first because its connection keeps no session (empty when it does). */
export function transactionLocalSettings(client: pg.ClientBase): string {
  return client instanceof TransactionPooledClient ? client.localSettings : '';
}

/**
 * The pool never crashes the process when the server goes away: idle-client errors are logged and the
 * client is dropped; the next checkout reconnects.
 */
export function createPool(connectionString: string, settings: PoolSettings, logger: Logger): pg.Pool {
  const timeouts = timeoutsOf(settings);
  const sessionSettings: pg.PoolConfig & Partial<TransactionPooledConfig> =
    settings.poolMode === 'transaction'
      ? {
          Client: TransactionPooledClient,
          localSettings: timeouts.map(([name, ms]) => `SET LOCAL ${name} = ${ms}`).join('; '),
        }
      : { options: timeouts.map(([name, ms]) => `-c ${name}=${ms}`).join(' ') };
  const pool = new pg.Pool({
    connectionString,
    max: settings.poolMax,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: 'inventory-service',
    ...sessionSettings,
    keepAlive: true,
    // A database that stops answering (frozen, partitioned) cannot enforce statement_timeout itself; the
    // client gives up a little after the server would have.
    query_timeout: settings.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
  });
  pool.on('error', (error) => {
    logger.warn({ err: error }, 'idle database connection failed; it was discarded');
  });
  // A connection the server ends while a request holds it emits 'error' on the client; without a listener
  // that would end the process. The request's own query fails and the client is discarded on release.
  pool.on('connect', (client) => {
    client.on('error', (error) => logger.warn({ err: error }, 'database connection failed while in use'));
  });
  return pool;
}

/**
 * A pool of one connection beside `of` (same server and credentials) for a probe that must never queue behind
 * requests: health, the backlog reading, a replica's lag. It answers within `timeoutMs` or fails; a lost idle
 * connection is what its next query finds out; nobody has to close it for the process to exit.
 */
export function probeConnection(
  of: pg.Pool,
  options: { readonly timeoutMs: number; readonly applicationName: string; readonly idleMs?: number },
): pg.Pool {
  const pool = new pg.Pool({
    ...(of.options as pg.PoolConfig),
    max: 1,
    connectionTimeoutMillis: options.timeoutMs,
    query_timeout: options.timeoutMs,
    ...(options.idleMs === undefined ? {} : { idleTimeoutMillis: options.idleMs }),
    allowExitOnIdle: true,
    application_name: options.applicationName,
  });
  pool.on('error', () => undefined);
  return pool;
}
