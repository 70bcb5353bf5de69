import type { Tx } from '../../src/db/tx.js';
import type { TestContext } from '../support/app.js';
import { rowsReadBy, type StatementRead } from '../support/plans.js';

export type { StatementRead };

/** The reservation tables and their indexes. */
const isReservationTable = (name: string): boolean => name.startsWith('reservation');

/** What `run` answered, and what each statement it sent read of the reservation tables (see rowsReadBy). */
export function reservationRowsReadBy<T>(
  ctx: TestContext,
  run: (tx: Tx) => Promise<T>,
): Promise<{ answer: T; statements: StatementRead[] }> {
  return rowsReadBy(ctx, run, isReservationTable);
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
