import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseProblem } from '../../src/db/pg-errors.js';
import { ApiError } from '../../src/http/api-error.js';
import { ServerError } from '../../src/http/server-error.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { closedPort } from '../support/ports.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`CREATE TABLE pg_errors_probe (
    id integer CONSTRAINT pg_errors_probe_pk PRIMARY KEY,
    amount integer CONSTRAINT pg_errors_probe_amount_positive CHECK (amount > 0),
    parent integer CONSTRAINT pg_errors_probe_parent_fk REFERENCES pg_errors_probe (id))`);
  await db.pool.query('INSERT INTO pg_errors_probe VALUES (1, 1, NULL)');
});

afterAll(async () => {
  await db?.drop();
});

async function caught(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the statement to fail');
}

describe('databaseProblem', () => {
  it('maps a refused connection (a pool pointed at a closed port) to a 503 ServerError with Retry-After', async () => {
    const pool = new pg.Pool({
      connectionString: `postgres://nobody:nothing@127.0.0.1:${await closedPort()}/none`,
      connectionTimeoutMillis: 2000,
    });
    try {
      const error = await caught(() => pool.query('SELECT 1'));
      expect(error).toMatchObject({ code: 'ECONNREFUSED' });
      const problem = databaseProblem(error);
      expect(problem).toBeInstanceOf(ServerError);
      expect(problem).toMatchObject({
        status: 503,
        exception: 'DataAccessResourceFailureException',
        message: 'The database is unavailable; retry later',
        headers: { 'Retry-After': '5' },
      });
    } finally {
      await pool.end();
    }
  });

  it('maps a wait for a pooled connection that timed out to its own 503: busy, not unavailable (issue 15)', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    try {
      const error = await caught(() => pool.query('SELECT 1'));
      expect(databaseProblem(error)).toMatchObject({
        status: 503,
        exception: 'CannotGetJdbcConnectionException',
        message: 'Every database connection of this instance is busy; retry later',
        headers: { 'Retry-After': '1' },
      });
    } finally {
      held.release();
      await pool.end();
    }
  });

  it('maps a connection the server terminated to a 503', async () => {
    const client = await db.pool.connect();
    try {
      const error = await caught(() => client.query('SELECT pg_terminate_backend(pg_backend_pid())'));
      expect(databaseProblem(error)).toMatchObject({ status: 503, exception: 'DataAccessResourceFailureException' });
    } finally {
      client.release(true);
    }
  });

  it('maps a unique violation to an API-declined 409 naming the constraint', async () => {
    const error = await caught(() => db.pool.query('INSERT INTO pg_errors_probe VALUES (1, 1, NULL)'));
    const problem = databaseProblem(error);
    expect(problem).toBeInstanceOf(ApiError);
    expect(problem).toMatchObject({
      status: 409,
      messageKey: 'owms.common.common.alreadyExists',
      obj: ['pg_errors_probe_pk'],
    });
  });

  it.each([
    ['a check constraint', 'INSERT INTO pg_errors_probe VALUES (2, 0, NULL)', 'pg_errors_probe_amount_positive'],
    ['a foreign key', 'INSERT INTO pg_errors_probe VALUES (3, 1, 99)', 'pg_errors_probe_parent_fk'],
  ])('maps a violated %s to an API-declined 409 naming it', async (_what, sql, constraint) => {
    const problem = databaseProblem(await caught(() => db.pool.query(sql)));
    expect(problem).toBeInstanceOf(ApiError);
    expect(problem).toMatchObject({
      status: 409,
      messageKey: 'owms.common.common.constraintViolated',
      obj: [constraint],
    });
  });

  it('maps an expired lock_timeout to a 503 the client may retry', async () => {
    const holder = await db.pool.connect();
    const waiter = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM pg_errors_probe WHERE id = 1 FOR UPDATE');
      await waiter.query(`SET lock_timeout = '50ms'`);
      const error = await caught(() => waiter.query('UPDATE pg_errors_probe SET amount = 2 WHERE id = 1'));
      expect(error).toMatchObject({ code: '55P03' });
      expect(databaseProblem(error)).toMatchObject({
        status: 503,
        exception: 'QueryTimeoutException',
        headers: { 'Retry-After': '1' },
      });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      waiter.release(true);
    }
  });

  it('maps an expired statement_timeout to a 503 the client may retry', async () => {
    const client = await db.pool.connect();
    try {
      await client.query(`SET statement_timeout = '50ms'`);
      const error = await caught(() => client.query('SELECT pg_sleep(2)'));
      expect(error).toMatchObject({ code: '57014' });
      expect(databaseProblem(error)).toMatchObject({ status: 503, exception: 'QueryTimeoutException' });
    } finally {
      client.release(true);
    }
  });

  it('leaves errors that are not the database’s to the caller', async () => {
    const syntax = await caught(() => db.pool.query('SELEC 1'));
    expect(syntax).toMatchObject({ code: '42601' });
    expect(databaseProblem(syntax)).toBeUndefined();
    expect(databaseProblem(new Error('plain'))).toBeUndefined();
    expect(databaseProblem('text')).toBeUndefined();
    expect(databaseProblem(null)).toBeUndefined();
  });
});
