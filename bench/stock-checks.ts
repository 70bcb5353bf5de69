import type pg from 'pg';

// The invariant checks are the test suite's, limited to the benchmark's Products by SKU prefix.
export { ledgerViolations, reservationViolations, stockLevelViolations } from '../test/support/stock-invariants.js';

/** Sum of the quantities ever reserved (in PC) on the Products whose SKU starts with the prefix. */
export async function reservedTotal(pool: pg.Pool, skuPrefix: string): Promise<number> {
  const { rows } = await pool.query<{ total: string }>(
    `SELECT COALESCE(sum(r.qty_base), 0)::text AS total FROM reservation r
       JOIN packaging_unit pu ON pu.id = r.packaging_unit_id
       JOIN product p ON p.id = pu.product_id AND p.sku LIKE $1 || '-%'`,
    [skuPrefix],
  );
  return Number(rows[0]?.total ?? 0);
}

/** Total and reserved stock (PC) of the Products whose SKU starts with the prefix. */
export async function stockTotals(pool: pg.Pool, skuPrefix: string): Promise<{ quantity: number; reserved: number }> {
  const { rows } = await pool.query<{ quantity: string; reserved: string }>(
    `SELECT COALESCE(sum(pu.qty_base), 0)::text AS quantity, COALESCE(sum(pu.reserved_base), 0)::text AS reserved
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id AND p.sku LIKE $1 || '-%'`,
    [skuPrefix],
  );
  return { quantity: Number(rows[0]?.quantity ?? 0), reserved: Number(rows[0]?.reserved ?? 0) };
}

/**
 * Reservations whose stored quantity differs from what the answers said (or that are missing). Requests cut off
 * when a load run stops may still commit; their reservations are simply not among the answered ones.
 */
export async function reservationMismatches(pool: pg.Pool, answered: ReadonlyMap<string, number>): Promise<string[]> {
  const { rows } = await pool.query<{ id: string; total: string }>(
    `SELECT reservation_id::text AS id, sum(qty_base)::text AS total FROM reservation
      WHERE reservation_id = ANY($1::uuid[]) GROUP BY reservation_id`,
    [[...answered.keys()]],
  );
  const stored = new Map(rows.map((row) => [row.id, Number(row.total)]));
  const problems: string[] = [];
  for (const [id, amount] of answered) {
    const inDatabase = stored.get(id);
    if (inDatabase !== amount)
      problems.push(`reservation ${id}: answered ${amount} PC, stored ${inDatabase ?? 'nothing'}`);
  }
  return problems.slice(0, 20);
}
