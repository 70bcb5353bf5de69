import type pg from 'pg';
import { vi } from 'vitest';
import type { Tx } from '../../src/db/tx.js';
import type { TestContext } from '../support/app.js';

/** The part of an EXPLAIN (ANALYZE, FORMAT JSON) plan node that says what a scan read. */
export interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/**
 * Rows each scan of the reservation tables read, returned or filtered out, and entries each bitmap scan of their
 * indexes read, over all its loops.
 */
export function reservationRowsRead(node: PlanNode): number {
  const reservations =
    ['reservation', 'reservation_life'].includes(node['Relation Name'] ?? '') ||
    (node['Relation Name'] === undefined && (node['Index Name'] ?? '').startsWith('reservation'));
  const own = reservations
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
      node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + reservationRowsRead(child), 0);
}

/** `count` reservations of 1 PC on the free pieces of the Product's units, expiring `expiresIn` from now. */
export async function seedReservations(ctx: TestContext, sku: string, count: number, expiresIn: string): Promise<void> {
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
       SELECT reservation_id, id, p_key, 1, 'test', 'plans' FROM placed
     )
     UPDATE packaging_unit pu SET reserved_base = pu.reserved_base + c.n
       FROM (SELECT id, count(*) AS n FROM placed GROUP BY id) c WHERE pu.id = c.id`,
    [sku, count, expiresIn],
  );
}

/** What one statement read: its text's start, and the reservation rows and index entries it read. */
export interface StatementRead {
  statement: string;
  rows: number;
}

/**
 * `run` on a connection of its own, rolled back, then every statement it sent run again with EXPLAIN ANALYZE (same
 * parameters, same order, so the same locks and rows), rolled back: what `run` answered, and what each statement
 * read of the reservation tables.
 */
export async function reservationRowsReadBy<T>(
  ctx: TestContext,
  run: (tx: Tx) => Promise<T>,
): Promise<{ answer: T; statements: StatementRead[] }> {
  const client = await ctx.db.pool.connect();
  try {
    await client.query('BEGIN');
    const query = vi.spyOn(client, 'query');
    const answer = await run(client as Tx);
    const sent = query.mock.calls.map(([config, values]) =>
      typeof config === 'string'
        ? { text: config, values: values as unknown[] }
        : { text: (config as pg.QueryConfig).text, values: (config as pg.QueryConfig).values },
    );
    query.mockRestore();
    await client.query('ROLLBACK');
    await client.query('BEGIN');
    const statements: StatementRead[] = [];
    for (const { text, values } of sent) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      );
      statements.push({
        statement: text.replace(/\s+/g, ' ').slice(0, 60),
        rows: reservationRowsRead(rows[0]!['QUERY PLAN'][0].Plan),
      });
    }
    return { answer, statements };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}
