import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { startEmbeddedPostgres } from './embedded.js';
import { createPool } from './pool.js';

export interface Database {
  readonly pool: pg.Pool;
  /**
   * Connections with a session of their own, for the migrations' advisory lock and the feed's LISTEN: the request
   * pool itself unless DATABASE_DIRECT_URL points elsewhere (past a transaction pooler, issue 17).
   */
  readonly sessionPool: pg.Pool;
  /** Where the data lives, for the log: a server address without credentials, or the embedded data folder. */
  readonly description: string;
  close(): Promise<void>;
}

/** A server address without credentials, for the log. */
export function redact(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

// How long the embedded server's stop waits for the pool's connections to close; a stuck one is cut by it.
const CONNECTIONS_CLOSE_WAIT_MS = 2000;

/**
 * pool.end() resolves once its connections are told to end, not once they have: the embedded server's fast
 * shutdown right after would still find some and end each with an error in the log. Their closing is awaited.
 */
function openConnections(pool: pg.Pool): { closed(ms: number): Promise<void> } {
  const open = new Set<Promise<unknown>>();
  pool.on('connect', (client) => {
    // Not events.once: it would reject on the client's 'error', which the pool's own listener reports.
    const ended = new Promise((resolve) => client.once('end', resolve));
    open.add(ended);
    void ended.finally(() => open.delete(ended));
  });
  return {
    async closed(ms) {
      await Promise.race([Promise.all(open), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
    },
  };
}

/** DATABASE_URL when set; otherwise an embedded PostgreSQL under DATA_DIR, stopped again by close(). */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  if (config.databaseUrl) {
    const pool = createPool(config.databaseUrl, config.db, logger);
    const directUrl = config.databaseDirectUrl ?? config.databaseUrl;
    // Migrations hold one session while they run; the listener opens a client of its own from these options.
    const sessionPool =
      directUrl === config.databaseUrl
        ? pool
        : createPool(directUrl, { ...config.db, poolMax: 1, poolMode: 'session' }, logger);
    const description = `PostgreSQL server at ${redact(config.databaseUrl)}`;
    logger.info(
      {
        database: description,
        poolMode: config.db.poolMode,
        ...(sessionPool !== pool && { direct: redact(directUrl) }),
      },
      'using the configured PostgreSQL server',
    );
    return {
      pool,
      sessionPool,
      description,
      close: async () => {
        await Promise.all([pool.end(), sessionPool === pool ? undefined : sessionPool.end()]);
      },
    };
  }
  const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
  const pool = createPool(embedded.url, config.db, logger);
  const connections = openConnections(pool);
  const description = `embedded PostgreSQL on 127.0.0.1:${embedded.port}, data in ${embedded.dataDirectory}`;
  logger.info({ database: description }, 'using the embedded PostgreSQL');
  return {
    pool,
    sessionPool: pool,
    description,
    close: async () => {
      await pool.end().catch((error: unknown) => logger.warn({ err: error }, 'closing the pool failed'));
      await connections.closed(CONNECTIONS_CLOSE_WAIT_MS);
      await embedded.stop();
    },
  };
}
