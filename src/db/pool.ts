import pg from 'pg';
import type { Logger } from 'pino';

export interface PoolSettings {
  readonly poolMax: number;
  readonly connectTimeoutMs: number;
  readonly lockTimeoutMs: number;
  readonly statementTimeoutMs: number;
}

/**
 * The pool never crashes the process when the server goes away: idle-client errors are logged and the
 * client is dropped; the next checkout reconnects.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 2000;

export function createPool(connectionString: string, settings: PoolSettings, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: settings.poolMax,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: 'inventory-service',
    // Waiting forever on a lock or a runaway statement would hold a connection and a client hostage.
    options: `-c lock_timeout=${settings.lockTimeoutMs} -c statement_timeout=${settings.statementTimeoutMs} -c idle_in_transaction_session_timeout=60000`,
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
