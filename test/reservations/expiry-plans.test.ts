import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tx } from '../../src/db/tx.js';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
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
// the other active parts of their units.
const ROWS_PER_STATEMENT = 3 * LIMIT;

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows each scan of the reservation tables read, returned or filtered out, over all its loops. */
function reservationRowsRead(node: PlanNode): number {
  const own = ['reservation', 'reservation_life'].includes(node['Relation Name'] ?? '')
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
      node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + reservationRowsRead(child), 0);
}

/** `count` reservations of 1 PC on the free pieces of the Product's units, expiring `expiresIn` from now. */
async function seedReservations(sku: string, count: number, expiresIn: string): Promise<void> {
  await ctx.db.pool.query(
    `WITH placed AS (
       SELECT gen_random_uuid() AS reservation_id, pu.id, pu.p_key, pu.product_id
         FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
        CROSS JOIN LATERAL generate_series(1, floor(pu.qty_base - pu.reserved_base)::int)
        WHERE p.sku = $1
        ORDER BY pu.id LIMIT $2
     ), life AS (
       INSERT INTO reservation_life (reservation_id, product_id, qty_base, expires_at)
       SELECT reservation_id, product_id, 1, now() + $3::interval FROM placed
     ), part AS (
       INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id)
       SELECT reservation_id, id, p_key, 1, 'test', 'expiry-plans' FROM placed
     )
     UPDATE packaging_unit pu SET reserved_base = pu.reserved_base + c.n
       FROM (SELECT id, count(*) AS n FROM placed GROUP BY id) c WHERE pu.id = c.id`,
    [sku, count, expiresIn],
  );
}

/**
 * The statements of one batch of LIMIT, run as the expiry work runs them and rolled back, then run again with
 * EXPLAIN ANALYZE (same parameters, same order, so the same locks and rows) and rolled back: the rows each read.
 */
async function rowsReadByABatch(): Promise<{ statement: string; rows: number }[]> {
  const client = await ctx.db.pool.connect();
  try {
    await client.query('BEGIN');
    const query = vi.spyOn(client, 'query');
    expect(await expireDue(client as Tx, { subject: 'test', requestId: 'expiry-plans' }, LIMIT)).toBe(LIMIT);
    const statements = query.mock.calls.map(([config, values]) =>
      typeof config === 'string'
        ? { text: config, values: values as unknown[] }
        : { text: (config as pg.QueryConfig).text, values: (config as pg.QueryConfig).values },
    );
    query.mockRestore();
    await client.query('ROLLBACK');
    await client.query('BEGIN');
    const read: { statement: string; rows: number }[] = [];
    for (const { text, values } of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      );
      read.push({
        statement: text.replace(/\s+/g, ' ').slice(0, 60),
        rows: reservationRowsRead(rows[0]!['QUERY PLAN'][0].Plan),
      });
    }
    return read;
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
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
    await seedReservations(sku, NOT_DUE, '7 days');
    await seedReservations(sku, DUE, '-1 second');

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
