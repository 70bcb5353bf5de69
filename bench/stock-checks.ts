import type pg from 'pg';

/**
 * Units that break a reservation invariant: negative or over-reserved stock, or reserved_base differing from
 * the sum of the unit's active reservation rows. Every unit, or those of the Products whose SKU has the prefix.
 */
export async function reservationViolations(pool: pg.Pool, skuPrefix?: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `SELECT format('unit %s: qty %s, reserved %s, active reservations %s', pu.p_key, pu.qty_base, pu.reserved_base,
                   COALESCE(r.amount, 0)) AS line
       FROM packaging_unit pu
       JOIN product p ON p.id = pu.product_id AND ($1::text IS NULL OR p.sku LIKE $1 || '-%')
       LEFT JOIN (SELECT packaging_unit_id, sum(qty_base) AS amount FROM reservation
                   WHERE released_at IS NULL GROUP BY packaging_unit_id) r ON r.packaging_unit_id = pu.id
      WHERE pu.qty_magnitude < 0 OR pu.reserved_base < 0 OR pu.reserved_base > pu.qty_base
         OR pu.reserved_base <> COALESCE(r.amount, 0)
      LIMIT 20`,
    [skuPrefix ?? null],
  );
  return rows.map((row) => row.line);
}

/** Units whose latest ledger row does not end at their stored quantity and reservation (D24). */
export async function ledgerViolations(pool: pg.Pool, skuPrefix: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `WITH units AS (
       SELECT pu.p_key, pu.qty_base, pu.reserved_base FROM packaging_unit pu
         JOIN product p ON p.id = pu.product_id AND p.sku LIKE $1 || '-%'),
     latest AS (
       SELECT DISTINCT ON (m.packaging_unit_pkey) m.packaging_unit_pkey AS p_key, m.qty_after, m.reserved_after
         FROM stock_movement m JOIN units u ON u.p_key = m.packaging_unit_pkey
        ORDER BY m.packaging_unit_pkey, m.id DESC)
     SELECT format('unit %s: qty %s reserved %s, ledger ends at qty %s reserved %s', u.p_key, u.qty_base,
                   u.reserved_base, l.qty_after, l.reserved_after) AS line
       FROM units u LEFT JOIN latest l ON l.p_key = u.p_key
      WHERE l.p_key IS NULL OR l.qty_after <> u.qty_base OR l.reserved_after <> u.reserved_base
      LIMIT 20`,
    [skuPrefix],
  );
  return rows.map((row) => row.line);
}

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
