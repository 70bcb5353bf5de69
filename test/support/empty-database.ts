import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface EmptyDatabase {
  readonly url: string;
  readonly name: string;
  /** A new pool on this database; each one is closed by drop(). */
  pool(max?: number): pg.Pool;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A database with no schema at all (not cloned from the migrated template), for testing migrations themselves.
 * Named after the run's template so the global teardown drops it even when a test forgets to.
 */
export async function createEmptyDatabase(): Promise<EmptyDatabase> {
  const name = `${inject('templateDatabase')}_empty_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  const parsed = new URL(inject('adminDatabaseUrl'));
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  const pools: pg.Pool[] = [];
  return {
    url,
    name,
    pool(max = 2): pg.Pool {
      const pool = new pg.Pool({ connectionString: url, max });
      pools.push(pool);
      return pool;
    },
    async drop(): Promise<void> {
      await Promise.all(pools.map((pool) => pool.end()));
      await admin(async (client) => {
        // pool.end() does not wait for the server to see the goodbye; forcing the drop earlier would send a
        // FATAL to a client that no longer listens for errors.
        for (let waited = 0; waited < 5000; waited += 50) {
          const { rows } = await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (rows[0]?.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      });
    },
  };
}
