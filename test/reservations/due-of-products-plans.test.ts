import { beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/tx.js';
import { lockNextCandidates } from '../../src/allocation/sql.js';
import { selectUnitByPKey } from '../../src/packaging-units/sql.js';
import { lockDueReservationsOfProducts } from '../../src/reservations/sql.js';
import { useTestApp } from '../support/app.js';
import { CURRENT_STOCK_READINGS } from '../stock/readings.js';
import { givenReservation } from './reservation-api.js';
import { reservationRowsReadBy, seedReservations } from './plans.js';

/**
 * D40: every allocation and stock write first ends its Product's due reservations, and every reading of a unit
 * counts what due reservations hold on it as free. Each reads what it is about and nothing else, whatever the
 * statistics say: not the reservations that ended (they only grow) and not the due reservations of other Products
 * (tens of thousands during a mass expiry).
 */
const ctx = useTestApp();
const UNITS = 300;
const ENDED = 1500;
const DUE_ELSEWHERE = 1500;
const DUE_HERE = 20;
// A few passes over the Product's own due reservations (found, locked, read), far from the 1,500 of either kind.
const ROWS_READ_BOUND = 10 * DUE_HERE;

let quiet: string;
let busy: string;

/** What `read` answered, and the reservation rows and index entries its one statement read. */
async function oneStatementRead<T>(read: (tx: Tx) => Promise<T>): Promise<{ answer: T; rows: number }> {
  const { answer, statements } = await reservationRowsReadBy(ctx, read);
  expect(statements).toHaveLength(1);
  return { answer, rows: statements[0]!.rows };
}

/** The check finds, locks and reads the Product's due reservations, and next to nothing else. */
async function expectReadsOnlyItsOwn(sku: string): Promise<void> {
  const { answer, rows } = await oneStatementRead((tx) => lockDueReservationsOfProducts(tx, [sku]));
  expect({ due: answer.length, withinBound: rows <= ROWS_READ_BOUND }).toStrictEqual({
    due: DUE_HERE,
    withinBound: true,
  });
}

beforeAll(async () => {
  ({ sku: quiet } = await givenReservation(ctx, Array<number>(UNITS).fill(10), 1));
  ({ sku: busy } = await givenReservation(ctx, Array<number>(UNITS).fill(10), 1));
  await ctx.db.pool.query('ALTER TABLE reservation SET (autovacuum_enabled = off)');
  await ctx.db.pool.query('ALTER TABLE reservation_life SET (autovacuum_enabled = off)');
  await ctx.db.pool.query('DELETE FROM reservation');
  await ctx.db.pool.query('DELETE FROM reservation_life');
  await ctx.db.pool.query('UPDATE packaging_unit SET reserved_base = 0');
  await ctx.db.pool.query('VACUUM ANALYZE reservation, reservation_life');
  // The quiet Product's history: reservations that ended long ago (released).
  await seedReservations(ctx, quiet, ENDED, '-1 day');
  await ctx.db.pool.query(
    `UPDATE reservation_life SET state = 'RELEASED', ended_at = now() WHERE state = 'ACTIVE';
     UPDATE reservation SET released_at = now() WHERE released_at IS NULL;
     UPDATE packaging_unit SET reserved_base = 0;`,
  );
  await seedReservations(ctx, busy, DUE_ELSEWHERE, '-1 second');
}, 60_000);

describe('the check of a Product’s due reservations before a write (D40)', () => {
  it(`reads at most ${ROWS_READ_BOUND} reservation rows, statistics taken while the tables were empty`, async () => {
    await seedReservations(ctx, quiet, DUE_HERE, '-1 second');
    await expectReadsOnlyItsOwn(quiet);
  });

  it(`reads at most ${ROWS_READ_BOUND} reservation rows, statistics taken while none was due`, async () => {
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() + interval '8 days' WHERE expires_at <= now() AND state = 'ACTIVE'",
    );
    await ctx.db.pool.query('ANALYZE reservation, reservation_life');
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE expires_at > now() + interval '7 days 1 hour'",
    );
    await expectReadsOnlyItsOwn(quiet);
  });

  it(`reads at most ${ROWS_READ_BOUND} reservation rows, statistics up to date`, async () => {
    await ctx.db.pool.query('ANALYZE reservation, reservation_life');
    await expectReadsOnlyItsOwn(quiet);
  });

  it('finds the due reservations of every Product it is given, locked and answered in id order', async () => {
    const { rows: due } = await ctx.db.pool.query<{ reservationId: string }>(
      `SELECT r.reservation_id AS "reservationId" FROM reservation_life r JOIN product p ON p.id = r.product_id
        WHERE p.sku = ANY($1::text[]) AND r.state = 'ACTIVE' AND r.expires_at <= now() ORDER BY r.id`,
      [[quiet, busy]],
    );
    const { answer } = await oneStatementRead((tx) => lockDueReservationsOfProducts(tx, [busy, quiet]));
    expect({
      found: answer.map((row) => row.reservationId),
      states: [...new Set(answer.map((row) => row.state))],
    }).toStrictEqual({ found: due.map((row) => row.reservationId), states: ['EXPIRED'] });
    expect(due).toHaveLength(DUE_HERE + DUE_ELSEWHERE);
  });
});

describe('a reading of a unit (D40)', () => {
  it(`reads at most ${ROWS_READ_BOUND} reservation rows, past the ${ENDED} parts ended on the unit`, async () => {
    const { rows: units } = await ctx.db.pool.query<{ id: number; pKey: string }>(
      `SELECT pu.id, pu.p_key AS "pKey" FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
        WHERE p.sku = $1 ORDER BY pu.id DESC LIMIT 1`,
      [quiet],
    );
    const unit = units[0]!;
    // A pallet picked from for months: every reservation it ever had left a part on it, released.
    await ctx.db.pool.query(
      `WITH life AS (
         INSERT INTO reservation_life (reservation_id, product_id, qty_base, state, ended_at)
         SELECT gen_random_uuid(), product_id, 1, 'RELEASED', now()
           FROM packaging_unit, generate_series(1, $2::int) WHERE id = $1
         RETURNING reservation_id)
       INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id,
                                released_at)
       SELECT reservation_id, $1, $3, 1, 'test', 'plans', now() FROM life`,
      [unit.id, ENDED, unit.pKey],
    );
    await ctx.db.pool.query('ANALYZE reservation, reservation_life');

    const { answer, rows } = await oneStatementRead((tx) => selectUnitByPKey(tx, unit.pKey));
    expect({ unit: answer?.pKey, withinBound: rows <= ROWS_READ_BOUND }).toStrictEqual({
      unit: unit.pKey,
      withinBound: true,
    });
  });
});

describe('a stock reading of a Product (D40)', () => {
  it.each(CURRENT_STOCK_READINGS)(
    `%s reads at most ${ROWS_READ_BOUND} reservation rows while ${DUE_ELSEWHERE} of another Product's are due`,
    async (_name, read) => {
      // The quiet Product's ended reservations left dead entries in the index of active ones; the autovacuum this
      // file turned off would have removed them.
      await ctx.db.pool.query('VACUUM ANALYZE reservation, reservation_life');
      const { answer, rows } = await oneStatementRead((tx) => read(tx, quiet));
      expect({ answer: JSON.stringify(answer).includes(quiet), withinBound: rows <= ROWS_READ_BOUND }).toStrictEqual({
        answer: true,
        withinBound: true,
      });
    },
  );
});

describe('an allocation’s look for due reservations (D40)', () => {
  it(`reads at most ${ROWS_READ_BOUND} reservation rows for a Product with none due, statistics taken while none was due`, async () => {
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() + interval '8 days' WHERE expires_at <= now() AND state = 'ACTIVE'",
    );
    await ctx.db.pool.query('VACUUM ANALYZE reservation, reservation_life');
    // Only the other Product's fall due: the mass expiry of one SKU.
    await ctx.db.pool.query(
      `UPDATE reservation_life SET expires_at = now() - interval '1 second'
        WHERE expires_at > now() + interval '7 days 1 hour' AND product_id = (SELECT id FROM product WHERE sku = $1)`,
      [busy],
    );
    await expectAllocationLooksOnlyAtItsOwn();
  });

  it(`reads at most ${ROWS_READ_BOUND} reservation rows for a Product with none due, statistics up to date`, async () => {
    await ctx.db.pool.query('ANALYZE reservation, reservation_life');
    await expectAllocationLooksOnlyAtItsOwn();
  });
});

/** The quiet Product's allocation finds none of its own due, reading next to nothing of the busy one's. */
async function expectAllocationLooksOnlyAtItsOwn(): Promise<void> {
  const { answer, rows } = await oneStatementRead((tx) =>
    lockNextCandidates(tx, { sku: quiet, groupIds: null, seen: [], remaining: '1', limit: 8, unlessDue: true }),
  );
  expect({ due: answer.due, withinBound: rows <= ROWS_READ_BOUND }).toStrictEqual({ due: false, withinBound: true });
}
