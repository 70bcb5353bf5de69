import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { allowLongStatements, withTransaction, type Tx } from '../../src/db/tx.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('CREATE TABLE tx_probe (id integer PRIMARY KEY, value integer NOT NULL)');
});

afterAll(async () => {
  await db?.drop();
});

beforeEach(async () => {
  await db.pool.query('TRUNCATE tx_probe');
});

async function values(): Promise<Record<number, number>> {
  const { rows } = await db.pool.query<{ id: number; value: number }>('SELECT id, value FROM tx_probe ORDER BY id');
  return Object.fromEntries(rows.map((row) => [row.id, row.value]));
}

function failure(code: string): Error {
  return Object.assign(new Error(`synthetic ${code}`), { code });
}

/** Resolves once `parties` callers have arrived, so concurrent transactions interleave deterministically. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release: () => void = () => undefined;
  const open = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    arrived += 1;
    if (arrived === parties) release();
    await open;
  };
}

describe('withTransaction', () => {
  it('commits what the function wrote and returns its result', async () => {
    const result = await withTransaction(db.pool, async (tx) => {
      await tx.query('INSERT INTO tx_probe VALUES (1, 10), (2, 20)');
      return 'done';
    });
    expect(result).toBe('done');
    expect(await values()).toStrictEqual({ 1: 10, 2: 20 });
  });

  it('rolls back everything and rethrows the same error when the function throws', async () => {
    const thrown = new Error('business rule broken');
    const outcome = withTransaction(db.pool, async (tx) => {
      await tx.query('INSERT INTO tx_probe VALUES (1, 10)');
      throw thrown;
    });
    await expect(outcome).rejects.toBe(thrown);
    expect(await values()).toStrictEqual({});
  });

  it('rolls back and does not retry when a statement fails with a non-retryable error', async () => {
    await db.pool.query('INSERT INTO tx_probe VALUES (1, 10)');
    let attempts = 0;
    const outcome = withTransaction(db.pool, async (tx) => {
      attempts += 1;
      await tx.query('INSERT INTO tx_probe VALUES (2, 20)');
      await tx.query('INSERT INTO tx_probe VALUES (1, 11)');
    });
    await expect(outcome).rejects.toMatchObject({ code: '23505' });
    expect(attempts).toBe(1);
    expect(await values()).toStrictEqual({ 1: 10 });
  });

  it('runs at the requested isolation level and read-only when asked', async () => {
    const level = await withTransaction(
      db.pool,
      async (tx) =>
        (await tx.query<{ level: string }>('SELECT current_setting($1) AS level', ['transaction_isolation'])).rows[0]
          ?.level,
      { isolation: 'serializable' },
    );
    expect(level).toBe('serializable');
    const write = withTransaction(db.pool, (tx) => tx.query('INSERT INTO tx_probe VALUES (1, 1)'), { readOnly: true });
    await expect(write).rejects.toMatchObject({ code: '25006' });
    expect(await values()).toStrictEqual({});
  });

  it('returns its connection to the pool after commit, rollback and give-up alike', async () => {
    const busyBefore = db.pool.totalCount - db.pool.idleCount;
    await withTransaction(db.pool, async () => undefined);
    await withTransaction(db.pool, async () => Promise.reject(new Error('no'))).catch(() => undefined);
    await withTransaction(db.pool, async () => Promise.reject(failure('40001')), { maxAttempts: 2 }).catch(
      () => undefined,
    );
    expect(db.pool.totalCount - db.pool.idleCount).toBe(busyBefore);
  });

  it('survives its connection being ended between statements: rejects, and the pool drops that connection', async () => {
    let pid = 0;
    const outcome = withTransaction(
      db.pool,
      async (tx) => {
        pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        // The termination arrives while no statement runs: the driver reports it as an 'error' event.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
      },
      { maxAttempts: 1 },
    );

    await expect(outcome).rejects.toThrow();
    const { rows } = await db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(rows[0]!.pid).not.toBe(pid);
    expect(await withTransaction(db.pool, async (tx) => (await tx.query('SELECT 1 AS one')).rows[0])).toEqual({
      one: 1,
    });
  });
});

describe('withTransaction under concurrency', () => {
  /**
   * Write skew: each transaction reads both rows, then raises only its own row to the sum it saw. Run
   * serially the second one sees the first one's write; interleaved, PostgreSQL must refuse one (40001).
   */
  function writeSkew(
    own: number,
    arrive: () => Promise<void>,
    attempts: number[],
    maxAttempts?: number,
  ): Promise<void> {
    return withTransaction(
      db.pool,
      async (tx: Tx) => {
        attempts.push(own);
        const first = attempts.filter((id) => id === own).length === 1;
        const { rows } = await tx.query<{ total: number }>('SELECT sum(value)::int AS total FROM tx_probe');
        if (first) await arrive();
        await tx.query('UPDATE tx_probe SET value = $2 WHERE id = $1', [own, rows[0]?.total ?? 0]);
      },
      { isolation: 'serializable', ...(maxAttempts ? { maxAttempts } : {}) },
    );
  }

  it('retries a real serialization failure and ends as if the transactions ran one after the other', async () => {
    await db.pool.query('INSERT INTO tx_probe VALUES (1, 1), (2, 1)');
    const attempts: number[] = [];
    const arrive = barrier(2);
    await Promise.all([writeSkew(1, arrive, attempts), writeSkew(2, arrive, attempts)]);
    // At least one retry; a retry that starts before the other transaction has committed (a loaded machine) meets
    // the same conflict again and is retried once more.
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    // Serial outcome: the first raises its row to 2, the retried one sees 1 + 2 (or 2 + 1) = 3.
    expect(Object.values(await values()).sort()).toStrictEqual([2, 3]);
  });

  it('gives up after maxAttempts and rethrows the serialization failure', async () => {
    await db.pool.query('INSERT INTO tx_probe VALUES (1, 1), (2, 1)');
    const attempts: number[] = [];
    const arrive = barrier(2);
    const outcomes = await Promise.allSettled([writeSkew(1, arrive, attempts, 1), writeSkew(2, arrive, attempts, 1)]);
    expect(attempts).toHaveLength(2);
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({ code: '40001' });
    expect(Object.values(await values()).sort()).toStrictEqual([1, 2]);
  });

  it.each(['40001', '40P01'])('makes exactly maxAttempts attempts at a function failing with %s', async (code) => {
    let attempts = 0;
    const outcome = withTransaction(
      db.pool,
      async (tx) => {
        attempts += 1;
        await tx.query('INSERT INTO tx_probe VALUES ($1, 0)', [attempts]);
        throw failure(code);
      },
      { maxAttempts: 3 },
    );
    await expect(outcome).rejects.toMatchObject({ code });
    expect(attempts).toBe(3);
    expect(await values()).toStrictEqual({});
  });

  it('succeeds on a later attempt after a retryable failure, keeping only that attempt', async () => {
    let attempts = 0;
    await withTransaction(db.pool, async (tx) => {
      attempts += 1;
      await tx.query('INSERT INTO tx_probe VALUES ($1, 0)', [attempts]);
      if (attempts < 3) throw failure('40P01');
    });
    expect(attempts).toBe(3);
    expect(await values()).toStrictEqual({ 3: 0 });
  });
});

describe('a transaction that allows long statements (bulk loads)', () => {
  // The pool's statements end after 300 ms on the server and, should the server not answer, 2.3 s in the client.
  const settings = { poolMax: 1, connectTimeoutMs: 5000, lockTimeoutMs: 1000, statementTimeoutMs: 300 } as const;
  let pool: pg.Pool;
  beforeAll(() => {
    pool = createPool(db.url, { ...settings, poolMode: 'session' }, pino({ level: 'silent' }));
  });
  afterAll(() => pool?.end());

  it('runs a statement longer than the client-side limit, then gives the connection back with the pool limits', async () => {
    const slept = await withTransaction(pool, async (tx) => {
      await allowLongStatements(tx, 10_000);
      await tx.query('SELECT pg_sleep(2.6)');
      return true;
    });

    expect(slept).toBe(true);
    // The next transaction on that one connection has the client-side limit again, whatever the server allows.
    await expect(
      withTransaction(pool, async (tx) => {
        await tx.query('SET LOCAL statement_timeout = 10000');
        await tx.query('SELECT pg_sleep(2.6)');
      }),
    ).rejects.toThrow('Query read timeout');
  });
});
