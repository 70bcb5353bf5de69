import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, type PoolSettings } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/tx.js';
import { startEvents } from '../../src/events/runtime.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/pg-activity.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { describeWithPgBouncer } from '../support/pgbouncer-suite.js';

/**
 * Issue 17: what DATABASE_POOL_MODE=transaction changes behind a real PgBouncer in transaction mode with two server
 * connections, and what goes wrong without it. The HTTP test files run behind one too (TEST_THROUGH_PGBOUNCER=1).
 */
const SERVER_CONNECTIONS = 2;
const logger = pino({ level: 'silent' });
const TRANSACTION_POOLED: PoolSettings = {
  poolMax: 8,
  connectTimeoutMs: 5000,
  lockTimeoutMs: 5000,
  statementTimeoutMs: 120_000,
  poolMode: 'transaction',
};

describeWithPgBouncer('the service behind PgBouncer in transaction mode (issue 17)', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  let pooledUrl: string;
  const pools: pg.Pool[] = [];
  const pooled = (settings: Partial<PoolSettings> = {}): pg.Pool => {
    const pool = createPool(pooledUrl, { ...TRANSACTION_POOLED, ...settings }, logger);
    pools.push(pool);
    return pool;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    bouncer = await startPgBouncer({ serverUrl: db.url, poolSize: SERVER_CONNECTIONS });
    pooledUrl = bouncer.urlOf(db.name);
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await bouncer?.stop();
    await db?.drop();
  });

  it('runs 8 client connections on 2 server connections, a client’s named statements on either of them', async () => {
    const pool = pooled();
    const clients = await Promise.all(Array.from({ length: 8 }, () => pool.connect()));
    const pidsSeen = await Promise.all(
      clients.map(async (client) => {
        const pids: number[] = [];
        for (let i = 0; i < 20; i++) {
          const { rows } = await client.query<{ pid: number }>({
            name: 'backend-pid',
            text: 'SELECT pg_backend_pid() AS pid',
          });
          pids.push(rows[0]!.pid);
        }
        return new Set(pids);
      }),
    );
    const [servers, clientConnections] = [
      await bouncer.serverConnections(db.name),
      await bouncer.clientConnections(db.name),
    ];
    for (const client of clients) client.release();

    expect(new Set(pidsSeen.flatMap((pids) => [...pids])).size).toBe(SERVER_CONNECTIONS);
    expect(pidsSeen.filter((pids) => pids.size > 1).length).toBeGreaterThan(0);
    expect([servers, clientConnections]).toEqual([SERVER_CONNECTIONS, 8]);
  });

  it('applies the timeouts in each transaction and leaves none behind on the server connection', async () => {
    const pool = pooled({ poolMax: 1 });
    const show = `SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement,
                         current_setting('idle_in_transaction_session_timeout') AS idle`;

    const inside = await withTransaction(pool, async (tx) => (await tx.query(show)).rows[0]);
    const outside = (await pool.query(show)).rows[0];

    expect(inside).toEqual({ lock: '5s', statement: '2min', idle: '1min' });
    expect(outside).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('ends a lock wait after DB_LOCK_TIMEOUT_MS with 55P03', async () => {
    const pool = pooled({ lockTimeoutMs: 300 });
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(17)');
      const started = Date.now();
      const waiting = withTransaction(pool, (tx) => tx.query('SELECT pg_advisory_xact_lock(17)'));

      await expect(waiting).rejects.toMatchObject({ code: '55P03' });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it('migrates and LISTENs on DATABASE_DIRECT_URL, and runs the background work through the pooler', async () => {
    const config = testConfig({
      DATABASE_URL: pooledUrl,
      DATABASE_DIRECT_URL: db.url,
      DATABASE_POOL_MODE: 'transaction',
    });
    const database = await openDatabase(config, logger);
    const events = startEvents(database.pool, config, logger, database.sessionPool);
    try {
      expect(await migrate(database.sessionPool, logger)).toEqual([]);
      // The connection shows in pg_stat_activity before its first statement, with an empty query until then.
      const listener = await waitFor('the feed listener', async () => {
        const { rows } = await db.pool.query<{ query: string }>(
          `SELECT query FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'inventory-service-feed-listener'
              AND query <> ''`,
        );
        return rows[0];
      });
      expect(listener.query).toBe('LISTEN inventory_events');
      expect((database.sessionPool.options as pg.PoolConfig).connectionString).toBe(db.url);
      expect((database.pool.options as pg.PoolConfig).connectionString).toBe(pooledUrl);
    } finally {
      await events.stop();
      await database.close();
    }
  });

  it('is refused by PgBouncer without DATABASE_POOL_MODE=transaction: the timeouts come as startup options', async () => {
    const pool = pooled({ poolMode: 'session' });

    await expect(pool.query('SELECT 1')).rejects.toThrow('unsupported startup parameter: options');
  });

  it('loses a named statement once the next statement lands on the other server connection', async () => {
    // What DATABASE_POOL_MODE=transaction prevents: pg prepares a named statement once per client connection.
    const plain = new pg.Pool({ connectionString: pooledUrl, max: 3 });
    pools.push(plain);
    const [client, first, second] = await Promise.all([plain.connect(), plain.connect(), plain.connect()]);
    const named = { name: 'backend-pid', text: 'SELECT pg_backend_pid() AS pid' };
    const preparedOn = (await client.query<{ pid: number }>(named)).rows[0]!.pid;
    // Both server connections in transactions; the one that did not prepare the statement is then given back.
    const holders = [first!, second!];
    const pids = [];
    for (const holder of holders) {
      await holder.query('BEGIN');
      pids.push((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    }
    const other = holders[pids.indexOf(preparedOn) === 0 ? 1 : 0]!;
    await other.query('COMMIT');

    await expect(client.query(named)).rejects.toMatchObject({
      code: '26000',
      message: 'prepared statement "backend-pid" does not exist',
    });
    for (const holder of holders) await holder.query('ROLLBACK');
    for (const held of [client, first!, second!]) held.release();
  });
});
