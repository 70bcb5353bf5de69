import type pg from 'pg';

/** What the file's database is doing right now, read from pg_stat_activity / pg_stat_database. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it answers a value (not undefined); fails with `what` after `ms`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

export interface Backend {
  pid: number;
  applicationName: string;
  query: string;
  waitEventType: string | null;
  writing: boolean;
}

/** The other sessions on the current database; `writing`: inside a transaction that has written something. */
export async function backends(pool: pg.Pool): Promise<Backend[]> {
  const { rows } = await pool.query<Backend>(
    `SELECT pid, application_name AS "applicationName", query, wait_event_type AS "waitEventType",
            backend_xid IS NOT NULL AS writing
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows;
}

/** Waits until a session (not one of `except`) waits for a lock in a statement containing `statement`. */
export function lockWaiter(pool: pg.Pool, statement: string, except: readonly number[] = []): Promise<Backend> {
  return waitFor(`a session waiting for a lock in "${statement}"`, async () =>
    (await backends(pool)).find(
      (backend) =>
        backend.waitEventType === 'Lock' && backend.query.includes(statement) && !except.includes(backend.pid),
    ),
  );
}

export async function deadlockCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ deadlocks: string }>(
    'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(rows[0]!.deadlocks);
}

/**
 * Deadlocks PostgreSQL broke on the current database since `before`. A session publishes its counters when it
 * goes idle or ends, so the idle sessions of the database are ended first (pools replace them; the pool of the
 * caller must tolerate 57P01 on idle clients); the count is read once they have exited.
 */
export async function deadlocksSince(pool: pg.Pool, before: number): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'`,
  );
  // A backend publishes its counters as it exits: once the ended ones are gone, the count is final.
  await waitFor('the ended sessions to exit', async () => {
    const left = await pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1)', [rows.map((row) => row.pid)]);
    return left.rows.length === 0 || undefined;
  });
  return (await deadlockCount(pool)) - before;
}
