import type pg from 'pg';

/**
 * The stock invariants (D21-D24) read straight from PostgreSQL. Each check answers the rows that break it, as
 * readable lines, so that an assertion `toEqual([])` shows what went wrong.
 */

export interface StoredUnit {
  id: number;
  pKey: string;
  sku: string;
  qtyBase: string;
  reservedBase: string;
  loadUnitId: number | null;
  locationId: number | null;
  state: string;
}

/** The Products' units as stored, by id. */
export async function storedUnits(pool: pg.Pool, skus: readonly string[]): Promise<StoredUnit[]> {
  const { rows } = await pool.query<StoredUnit & { id: string; loadUnitId: string | null; locationId: string | null }>(
    `SELECT pu.id, pu.p_key AS "pKey", p.sku, trim_scale(pu.qty_base)::text AS "qtyBase",
            trim_scale(pu.reserved_base)::text AS "reservedBase",
            pu.load_unit_id AS "loadUnitId", pu.location_id AS "locationId", pu.state
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
      WHERE p.sku = ANY($1::text[]) ORDER BY pu.id`,
    [skus],
  );
  return rows.map((row) => ({
    ...row,
    id: Number(row.id),
    loadUnitId: row.loadUnitId === null ? null : Number(row.loadUnitId),
    locationId: row.locationId === null ? null : Number(row.locationId),
  }));
}

/** sum(qty_base) and sum(reserved_base) of the Product's units, as exact decimal text without trailing zeros. */
export async function totalsOf(pool: pg.Pool, sku: string): Promise<{ qty: string; reserved: string; units: number }> {
  const { rows } = await pool.query<{ qty: string; reserved: string; units: string }>(
    `SELECT trim_scale(COALESCE(sum(pu.qty_base), 0))::text AS qty,
            trim_scale(COALESCE(sum(pu.reserved_base), 0))::text AS reserved,
            count(pu.id)::text AS units
       FROM product p LEFT JOIN packaging_unit pu ON pu.product_id = p.id WHERE p.sku = $1`,
    [sku],
  );
  const row = rows[0]!;
  return { qty: row.qty, reserved: row.reserved, units: Number(row.units) };
}

/** Products whose SKU starts with `skuPrefix` followed by '-', or every Product when it is null. */
const OF_PRODUCTS = `($1::text IS NULL OR p.sku LIKE $1 || '-%')`;

/**
 * No negative quantity; 0 <= reserved_base <= qty_base; reserved_base = the unit's active reservation rows; no
 * active reservation on a unit that no longer exists. Every unit, or those of the Products with the SKU prefix.
 * At most 20 lines, to keep a failure readable.
 */
export async function reservationViolations(pool: pg.Pool, skuPrefix?: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `SELECT format('unit %s: qty %s, reserved %s, active reservations %s', pu.p_key, pu.qty_base, pu.reserved_base,
                   COALESCE(r.amount, 0)) AS line
       FROM packaging_unit pu
       JOIN product p ON p.id = pu.product_id AND ${OF_PRODUCTS}
       LEFT JOIN (SELECT packaging_unit_id, sum(qty_base) AS amount FROM reservation
                   WHERE released_at IS NULL GROUP BY packaging_unit_id) r ON r.packaging_unit_id = pu.id
      WHERE pu.qty_magnitude < 0 OR pu.qty_base < 0 OR pu.reserved_base < 0 OR pu.reserved_base > pu.qty_base
         OR pu.reserved_base <> COALESCE(r.amount, 0)
     UNION ALL
     SELECT format('reservation %s: active, %s on a unit that no longer exists', reservation_id, qty_base)
       FROM reservation WHERE released_at IS NULL AND packaging_unit_id IS NULL AND $1::text IS NULL
     LIMIT 20`,
    [skuPrefix ?? null],
  );
  return rows.map((row) => row.line);
}

/**
 * D24: the ledger balances to the stock. Each existing unit's latest row ends at its quantity and reservation;
 * each unit the ledger knows but the stock does not ends at zero. Every unit, or those of the Products with the
 * SKU prefix; at most 20 lines.
 */
export async function ledgerViolations(pool: pg.Pool, skuPrefix?: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `WITH latest AS (
       SELECT DISTINCT ON (m.packaging_unit_pkey) m.packaging_unit_pkey AS p_key, m.kind, m.qty_after, m.reserved_after
         FROM stock_movement m JOIN product p ON p.id = m.product_id AND ${OF_PRODUCTS}
        ORDER BY m.packaging_unit_pkey, m.id DESC
     )
     SELECT format('unit %s: qty %s reserved %s, ledger ends at qty %s reserved %s (%s)', pu.p_key, pu.qty_base,
                   pu.reserved_base, l.qty_after, l.reserved_after, COALESCE(l.kind, 'no row')) AS line
       FROM packaging_unit pu
       JOIN product p ON p.id = pu.product_id AND ${OF_PRODUCTS}
       LEFT JOIN latest l ON l.p_key = pu.p_key
      WHERE l.p_key IS NULL OR l.qty_after <> pu.qty_base OR l.reserved_after <> pu.reserved_base
     UNION ALL
     SELECT format('unit %s is gone, ledger ends at qty %s reserved %s (%s)', l.p_key, l.qty_after,
                   l.reserved_after, l.kind)
       FROM latest l
      WHERE NOT EXISTS (SELECT 1 FROM packaging_unit pu WHERE pu.p_key = l.p_key)
        AND (l.qty_after <> 0 OR l.reserved_after <> 0)
     LIMIT 20`,
    [skuPrefix ?? null],
  );
  return rows.map((row) => row.line);
}

/**
 * D31: the per-Product sums that stock levels read (stock_level, kept by triggers) differ from the sums over the
 * units: on hand, reserved, and what the units' own state leaves free. Every Product has its row. At most 20 lines.
 */
export async function stockLevelViolations(pool: pg.Pool, skuPrefix?: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `WITH units AS (
       SELECT pu.product_id, sum(pu.qty_base) AS on_hand, sum(pu.reserved_base) AS reserved,
              sum(pu.qty_base - pu.reserved_base) FILTER (WHERE pu.state = 'AVAILABLE' AND pu.load_unit_id IS NOT NULL)
                AS free
         FROM packaging_unit pu GROUP BY pu.product_id
     )
     SELECT format('product %s: kept on hand %s reserved %s free %s, units hold %s, %s, %s', p.sku, sl.on_hand,
                   sl.reserved, sl.free, COALESCE(u.on_hand, 0), COALESCE(u.reserved, 0), COALESCE(u.free, 0)) AS line
       FROM product p
       LEFT JOIN stock_level sl ON sl.product_id = p.id
       LEFT JOIN units u ON u.product_id = p.id
      WHERE ${OF_PRODUCTS}
        AND (sl.product_id IS NULL OR sl.on_hand <> COALESCE(u.on_hand, 0) OR sl.reserved <> COALESCE(u.reserved, 0)
             OR sl.free <> COALESCE(u.free, 0))
      LIMIT 20`,
    [skuPrefix ?? null],
  );
  return rows.map((row) => row.line);
}

export async function allViolations(pool: pg.Pool): Promise<string[]> {
  return [
    ...(await reservationViolations(pool)),
    ...(await ledgerViolations(pool)),
    ...(await stockLevelViolations(pool)),
  ];
}
