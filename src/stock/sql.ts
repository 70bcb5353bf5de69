import type { Queryable } from '../db/tx.js';
import { DUE_HOLDINGS } from '../reservations/sql.js';

/** Amounts are exact decimal text in the kind's smallest unit (PC or MG), as qty_base. */
export interface StockFigures {
  readonly onHand: string;
  readonly reserved: string;
  readonly available: string;
}

export interface ProductStock extends StockFigures {
  readonly sku: string;
  readonly baseUnitCode: string;
}

export interface StockReading extends ProductStock {
  /** The instant of the snapshot the figures were read in. */
  readonly asOf: Date;
}

export interface StockRow extends StockFigures {
  /** The LocationGroup's name or the Location's locationId; null where the place is not known. */
  readonly place: string | null;
}

export interface PastStock {
  readonly sku: string;
  readonly baseUnitCode: string;
  readonly onHand: string;
  readonly reserved: string;
  /** Where the kept ledger begins (D34); null while it is kept from the start. */
  readonly keptSince: Date | null;
}

/**
 * What of each Product's free stock lies in locked LoadUnits, which stock_level counts as free: few LoadUnits are
 * locked at a time (migration 0010 indexes them). `products` is a SQL condition on `pu.product_id`.
 */
const freeInLockedLoadUnits = (products: string): string =>
  `SELECT pu.product_id, sum(allocatable_free(pu.state, pu.load_unit_id, pu.qty_base, pu.reserved_base)) AS free
     FROM packaging_unit pu
    WHERE pu.load_unit_id = ANY(ARRAY(SELECT lu.id FROM load_unit lu WHERE NOT allocatable_load_unit(lu.locked)))
      AND ${products}
    GROUP BY pu.product_id`;

/**
 * D40: what reservations past their expiry, not yet ended, hold of each Product (`reserved`), and the free stock
 * they give back once ended (`free`, the change of allocatable_free of each unit in a LoadUnit not locked): they
 * are EXPIRED already, and allocation ends them before it looks for candidates. `products` is a SQL condition on
 * `d.product_id`.
 */
const dueHeld = (products: string): string =>
  `SELECT d.product_id, sum(d.qty_base) AS reserved,
          sum(CASE WHEN allocatable_load_unit(lu.locked)
                   THEN allocatable_free(pu.state, pu.load_unit_id, pu.qty_base, pu.reserved_base - d.qty_base)
                        - allocatable_free(pu.state, pu.load_unit_id, pu.qty_base, pu.reserved_base)
                   ELSE 0 END) AS free
     FROM (${DUE_HOLDINGS}) d
     JOIN packaging_unit pu ON pu.id = d.unit_id
     LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
    WHERE ${products}
    GROUP BY d.product_id`;

/** `reserved` of the Product `p` from its stock_level row `sl` and `due` (D40). */
const RESERVED = `sl.reserved - COALESCE(due.reserved, 0)`;

/**
 * D31 `available` of the Product `p` from its stock_level row `sl`, `locked` and `due`: what allocation (D23) can
 * take.
 */
const AVAILABLE = `CASE WHEN allocatable_product(p.availability_state)
                        THEN sl.free - COALESCE(locked.free, 0) + COALESCE(due.free, 0) ELSE 0 END`;

/** A Product's figures from its stock_level row, in one statement and so one snapshot; none for an unknown SKU. */
export async function selectStockLevel(db: Queryable, sku: string): Promise<StockReading | undefined> {
  const result = await db.query<StockReading>({
    name: 'stock-level',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode", sl.on_hand::text AS "onHand",
                  (${RESERVED})::text AS reserved, (${AVAILABLE})::text AS available, statement_timestamp() AS "asOf"
             FROM product p JOIN stock_level sl ON sl.product_id = p.id
             LEFT JOIN (${freeInLockedLoadUnits('pu.product_id = (SELECT id FROM product WHERE sku = $1)')}) locked
                    ON locked.product_id = p.id
             LEFT JOIN (${dueHeld('d.product_id = (SELECT id FROM product WHERE sku = $1)')}) due
                    ON due.product_id = p.id
            WHERE p.sku = $1`,
    values: [sku],
  });
  return result.rows[0];
}

/** Where a unit stands: its own Location when loose, else its TransportUnit's (D23 looks there too). */
const PLACE_JOINS = `LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
          LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
          LEFT JOIN location loc ON loc.id = COALESCE(pu.location_id, tu.actual_location_id)`;

export type Grouping = 'locationGroup' | 'location' | 'none';

const PLACE_KEY: Record<Grouping, string> = {
  locationGroup: '(SELECT g.name FROM location_group g WHERE g.id = loc.location_group_id)',
  location: 'loc.location_id',
  none: 'NULL::text',
};

/**
 * A Product's figures summed over its units, one row per place (or one row in all), in one statement: for the
 * rows by place and for stock in some LocationGroups, which stock_level does not keep. `groupIds` null: everywhere.
 * Rows sort by name, bytewise, the unknown place last.
 */
export async function selectStockByPlace(
  db: Queryable,
  sku: string,
  grouping: Grouping,
  groupIds: readonly number[] | null,
): Promise<{ product: StockReading; rows: StockRow[] } | undefined> {
  const result = await db.query<StockReading & { rows: StockRow[] }>(
    `WITH p AS (SELECT id, sku, base_unit_code, availability_state FROM product WHERE sku = $1),
          place AS (
            SELECT ${PLACE_KEY[grouping]} AS place, sum(pu.qty_base) AS on_hand,
                   sum(pu.reserved_base - COALESCE(due.qty_base, 0)) AS reserved,
                   sum(CASE WHEN allocatable_product(p.availability_state) AND allocatable_load_unit(lu.locked)
                            THEN allocatable_free(pu.state, pu.load_unit_id, pu.qty_base,
                                                  pu.reserved_base - COALESCE(due.qty_base, 0))
                            ELSE 0 END) AS available
              FROM p JOIN packaging_unit pu ON pu.product_id = p.id
              ${PLACE_JOINS}
              -- D40: what reservations past their expiry hold counts as unreserved already.
              LEFT JOIN (${DUE_HOLDINGS}) due ON due.unit_id = pu.id
             WHERE $2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[])
             GROUP BY 1
          )
     SELECT p.sku, p.base_unit_code AS "baseUnitCode", statement_timestamp() AS "asOf",
            COALESCE((SELECT json_agg(json_build_object('place', place, 'onHand', on_hand::text,
                                                        'reserved', reserved::text, 'available', available::text)
                                      ORDER BY place COLLATE "C" NULLS LAST)
                        FROM place), '[]') AS rows
       FROM p`,
    [sku, groupIds],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { rows, ...product } = row;
  return { product, rows };
}

/**
 * A Product's onHand and reserved at a past instant: today's figures less what the ledger rows after it changed
 * (D24 rows carry each change's before and after), read from stock_movement_product_time_idx alone. The cost is
 * the Product's changes since then, not its whole history, and dropping old ledger months changes nothing here.
 */
export async function selectStockAt(db: Queryable, sku: string, at: string): Promise<PastStock | undefined> {
  const result = await db.query<PastStock>({
    name: 'stock-at',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode",
                  (sl.on_hand - COALESCE(later.on_hand, 0))::text AS "onHand",
                  (sl.reserved - COALESCE(later.reserved, 0))::text AS reserved,
                  (SELECT kept_since FROM ledger_horizon) AS "keptSince"
             FROM product p
             JOIN stock_level sl ON sl.product_id = p.id
             LEFT JOIN LATERAL (
               SELECT sum(m.qty_after - m.qty_before) AS on_hand, sum(m.reserved_after - m.reserved_before) AS reserved
                 FROM stock_movement m
                WHERE m.product_id = p.id AND m.occurred_at > $2::timestamptz
             ) later ON true
            WHERE p.sku = $1`,
    values: [sku, at],
  });
  return result.rows[0];
}

/** A page of every Product's figures in SKU order, the Products after `afterSku`; `limit + 1` rows. */
export async function selectStockPage(
  db: Queryable,
  page: { limit: number; afterSku?: string },
): Promise<ProductStock[]> {
  const result = await db.query<ProductStock>({
    name: 'stock-page',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode", sl.on_hand::text AS "onHand",
                  (${RESERVED})::text AS reserved, (${AVAILABLE})::text AS available
             FROM product p JOIN stock_level sl ON sl.product_id = p.id
             LEFT JOIN (${freeInLockedLoadUnits('true')}) locked ON locked.product_id = p.id
             LEFT JOIN (${dueHeld('true')}) due ON due.product_id = p.id
            WHERE $1::text IS NULL OR p.sku > $1::text
            ORDER BY p.sku
            LIMIT $2`,
    values: [page.afterSku ?? null, page.limit + 1],
  });
  return result.rows;
}
