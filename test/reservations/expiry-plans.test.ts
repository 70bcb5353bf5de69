import { beforeAll, describe, expect, it } from 'vitest';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import { reservationRowsReadBy, seedReservations, type StatementRead } from './plans.js';
import { givenReservation } from './reservation-api.js';

/**
 * D40: an expiry batch reads what its own reservations need, whatever the statistics say, never every due
 * reservation or the whole table. In the full bench run of 2026-11-29 17:30 the statistics were taken while no
 * reservation was due: each batch then read every due one per unit it read, and 44,505 due at once took 0.81 ms of
 * PostgreSQL CPU each (0.13 ms with plans that read only the batch).
 */
const ctx = useTestApp();
const LIMIT = 100;
// Units of 10 PC, as the bench's allocation stock: a unit's parts are at most ten, so a batch's units hold few.
const UNITS = 200;
const NOT_DUE = 500;
const DUE = 1500;
// Rows of reservation and reservation_life one statement of a batch may read: its reservations, their parts, and
// the other active parts of their units, each found in an index and read from the table, and a little more: far
// below the 1,500 due and 500 not due that a plan over all reservations reads.
const ROWS_PER_STATEMENT = 7 * LIMIT;

/** The statements of one batch of LIMIT, as the expiry work runs them: the rows each read. */
async function rowsReadByABatch(): Promise<StatementRead[]> {
  const { answer, statements } = await reservationRowsReadBy(ctx, (tx) =>
    expireDue(tx, { subject: 'test', requestId: 'expiry-plans' }, LIMIT),
  );
  expect(answer).toBe(LIMIT);
  return statements;
}

let sku: string;

beforeAll(async () => {
  ({ sku } = await givenReservation(ctx, Array<number>(UNITS).fill(10), 1));
  // The statistics stay as this test takes them, as between two runs of autovacuum.
  await ctx.db.pool.query('ALTER TABLE reservation SET (autovacuum_enabled = off)');
  await ctx.db.pool.query('ALTER TABLE reservation_life SET (autovacuum_enabled = off)');
}, 60_000);

describe('an expiry batch with statistics that lag behind (D40)', () => {
  it(`reads at most ${ROWS_PER_STATEMENT} reservation rows per statement, statistics taken while the tables were empty`, async () => {
    await ctx.db.pool.query('DELETE FROM reservation');
    await ctx.db.pool.query('DELETE FROM reservation_life');
    await ctx.db.pool.query('UPDATE packaging_unit SET reserved_base = 0');
    await ctx.db.pool.query('VACUUM ANALYZE reservation, reservation_life');
    await seedReservations(ctx, sku, NOT_DUE, '7 days');
    await seedReservations(ctx, sku, DUE, '-1 second');

    expect((await rowsReadByABatch()).filter(({ rows }) => rows > ROWS_PER_STATEMENT)).toEqual([]);
  });

  it(`reads at most ${ROWS_PER_STATEMENT} reservation rows per statement, statistics taken while none was due`, async () => {
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() + interval '8 days' WHERE expires_at <= now() AND state = 'ACTIVE'",
    );
    await ctx.db.pool.query('ANALYZE reservation, reservation_life');
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE expires_at > now() + interval '7 days 1 hour'",
    );

    expect((await rowsReadByABatch()).filter(({ rows }) => rows > ROWS_PER_STATEMENT)).toEqual([]);
  });
});
