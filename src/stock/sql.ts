import type { Queryable, Tx } from '../db/tx.js';
import { dueHoldingsOf } from '../reservations/sql.js';

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

/**
 * D40: the commit boundary (migration 0016) a reading stands on: the feed position through which its figures count
 * every change, and whether the Product changed in a transaction committed after that boundary (the figures then
 * hold a change the feed has not numbered yet, and the reading is taken again).
 */
export interface BoundaryCheck {
  readonly feedCursor: number;
  readonly changedSince: boolean;
}

export interface StockReading extends ProductStock, BoundaryCheck {
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
  /** The last event the figures include; null when no boundary is kept for the instant (D40). */
  readonly feedCursor: number | null;
}

/** The newest commit boundary (migration 0016), as a lateral join `b` with `position` and `snapshot`. */
const NEWEST_BOUNDARY = `LEFT JOIN LATERAL (
               SELECT position, snapshot FROM feed_boundary ORDER BY position DESC, committed_at DESC LIMIT 1) b ON true`;

/**
 * Ledger rows of the Product `product` whose transaction the boundary `b` does not see: committed after it. The
 * index on (product_id, xact_id) finds them: a transaction the snapshot does not see has an id at or above its
 * xmin. Rows from before migration 0016 have no transaction and are seen by every boundary.
 */
const unseenBy = (product: string): string =>
  `m.product_id = ${product} AND m.xact_id >= pg_snapshot_xmin(b.snapshot)
                  AND NOT pg_visible_in_snapshot(m.xact_id, b.snapshot)`;

/**
 * Whether the Product changed after the boundary `b`. Asked for the first such row in `xact_id` order, which only
 * the index gives without reading every row, rather than as `EXISTS`: when one Product had most of the ledger (an
 * intake of one SKU), the statistics put any Product's rows at most of the table, `EXISTS` expected a match within
 * the first rows of a sequential scan, and each reading of every other Product read the whole month of the ledger
 * (25 ms at 100,000 rows; test/stock/changed-since-plans.test.ts).
 */
const CHANGED_SINCE = (product: string): string =>
  `(SELECT true FROM stock_movement m WHERE ${unseenBy(product)} ORDER BY m.xact_id LIMIT 1) IS NOT NULL
     AS "changedSince"`;

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
 * D40: what reservations past their expiry, not yet ended, hold of the Product `product` (a SQL expression of its
 * id; `reserved`), and the free stock they give back once ended (`free`, the change of allocatable_free of each unit
 * in a LoadUnit not locked): they are EXPIRED already, and allocation ends them before it looks for candidates.
 */
const dueHeld = (product: string): string =>
  `SELECT d.product_id, sum(d.qty_base) AS reserved,
          sum(CASE WHEN allocatable_load_unit(lu.locked)
                   THEN allocatable_free(pu.state, pu.load_unit_id, pu.qty_base, pu.reserved_base - d.qty_base)
                        - allocatable_free(pu.state, pu.load_unit_id, pu.qty_base, pu.reserved_base)
                   ELSE 0 END) AS free
     FROM (${dueHoldingsOf(product)}) d
     JOIN packaging_unit pu ON pu.id = d.unit_id
     LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
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
                  (${RESERVED})::text AS reserved, (${AVAILABLE})::text AS available, statement_timestamp() AS "asOf",
                  b.position AS "feedCursor", ${CHANGED_SINCE('p.id')}
             FROM product p JOIN stock_level sl ON sl.product_id = p.id
             LEFT JOIN (${freeInLockedLoadUnits('pu.product_id = (SELECT id FROM product WHERE sku = $1)')}) locked
                    ON locked.product_id = p.id
             LEFT JOIN LATERAL (${dueHeld('p.id')}) due ON true
             ${NEWEST_BOUNDARY}
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
          b AS (SELECT position, snapshot FROM feed_boundary ORDER BY position DESC, committed_at DESC LIMIT 1),
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
              LEFT JOIN (${dueHoldingsOf('(SELECT id FROM p)')}) due ON due.unit_id = pu.id
             WHERE $2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[])
             GROUP BY 1
          )
     SELECT p.sku, p.base_unit_code AS "baseUnitCode", statement_timestamp() AS "asOf",
            b.position AS "feedCursor", ${CHANGED_SINCE('p.id')},
            COALESCE((SELECT json_agg(json_build_object('place', place, 'onHand', on_hand::text,
                                                        'reserved', reserved::text, 'available', available::text)
                                      ORDER BY place COLLATE "C" NULLS LAST)
                        FROM place), '[]') AS rows
       FROM p LEFT JOIN b ON true`,
    [sku, groupIds],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { rows, ...product } = row;
  return { product, rows };
}

/**
 * A Product's onHand and reserved at a past instant, by commit (D40): the last commit boundary at or before it, and
 * today's figures less what the ledger rows of the transactions that boundary does not see changed (D24 rows carry
 * each change's before and after). The cost is the Product's changes since then, not its whole history, and
 * dropping old ledger months changes nothing here. Rows from before migration 0016 carry no transaction; for an
 * instant before it they are taken by their own time, as before (stock_movement_product_time_idx).
 */
export async function selectStockAt(db: Queryable, sku: string, at: string): Promise<PastStock | undefined> {
  const result = await db.query<PastStock>({
    name: 'stock-at',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode",
                  (sl.on_hand - COALESCE(later.on_hand, 0) - COALESCE(legacy.on_hand, 0))::text AS "onHand",
                  (sl.reserved - COALESCE(later.reserved, 0) - COALESCE(legacy.reserved, 0))::text AS reserved,
                  h.kept_since AS "keptSince", b.position AS "feedCursor"
             FROM product p
             JOIN stock_level sl ON sl.product_id = p.id
             CROSS JOIN ledger_horizon h
             LEFT JOIN LATERAL (
               SELECT position, snapshot FROM feed_boundary WHERE committed_at <= $2::timestamptz
                ORDER BY committed_at DESC, position DESC LIMIT 1) b ON true
             LEFT JOIN LATERAL (
               SELECT sum(m.qty_after - m.qty_before) AS on_hand, sum(m.reserved_after - m.reserved_before) AS reserved
                 FROM stock_movement m WHERE ${unseenBy('p.id')}
             ) later ON true
             LEFT JOIN LATERAL (
               SELECT sum(m.qty_after - m.qty_before) AS on_hand, sum(m.reserved_after - m.reserved_before) AS reserved
                 FROM stock_movement m
                WHERE $2::timestamptz < h.commit_order_since AND m.product_id = p.id
                  AND m.occurred_at > $2::timestamptz AND m.xact_id IS NULL
             ) legacy ON true
            WHERE p.sku = $1`,
    values: [sku, at],
  });
  return result.rows[0];
}

/** A page of every Product's figures in SKU order, the Products after `afterSku`; `limit + 1` rows. */
export async function selectStockPage(
  db: Queryable,
  page: { limit: number; afterSku?: string },
): Promise<(ProductStock & BoundaryCheck)[]> {
  const result = await db.query<ProductStock & BoundaryCheck>({
    name: 'stock-page',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode", sl.on_hand::text AS "onHand",
                  (${RESERVED})::text AS reserved, (${AVAILABLE})::text AS available,
                  b.position AS "feedCursor", ${CHANGED_SINCE('p.id')}
             FROM product p JOIN stock_level sl ON sl.product_id = p.id
             LEFT JOIN (${freeInLockedLoadUnits('true')}) locked ON locked.product_id = p.id
             LEFT JOIN LATERAL (${dueHeld('p.id')}) due ON true
             ${NEWEST_BOUNDARY}
            WHERE $1::text IS NULL OR p.sku > $1::text
            ORDER BY p.sku
            LIMIT $2`,
    values: [page.afterSku ?? null, page.limit + 1],
  });
  return result.rows;
}

/** Where a boundary asked for by its position stands (D40): kept, gone with the history, or never one. */
export type BoundaryLookup =
  | { readonly found: true; readonly committedAt: Date; readonly keptSince: Date | null }
  | { readonly found: false; readonly expired: boolean };

export async function selectBoundary(db: Queryable, position: number): Promise<BoundaryLookup> {
  const result = await db.query<{ committedAt: Date | null; oldest: number | null; keptSince: Date | null }>({
    name: 'stock-boundary',
    text: `SELECT (SELECT max(committed_at) FROM feed_boundary WHERE position = $1) AS "committedAt",
                  (SELECT min(position) FROM feed_boundary) AS oldest,
                  (SELECT kept_since FROM ledger_horizon) AS "keptSince"`,
    values: [position],
  });
  const { committedAt, oldest, keptSince } = result.rows[0]!;
  if (committedAt === null) return { found: false, expired: oldest === null || position < oldest };
  return { found: true, committedAt, keptSince };
}

/** The position of the newest commit boundary (D40), null before the first. */
export async function selectNewestBoundaryPosition(db: Queryable): Promise<number | null> {
  const result = await db.query<{ position: string | null }>({
    name: 'stock-newest-boundary',
    text: 'SELECT max(position)::text AS position FROM feed_boundary',
  });
  const position = result.rows[0]?.position ?? null;
  return position === null ? null : Number(position);
}

/**
 * A page of every Product's onHand and reserved as of the commit boundary at `position` (D40): today's figures less
 * the ledger rows of the transactions it does not see, Product by Product; `limit + 1` rows.
 */
export async function selectStockPageAsOf(
  db: Queryable,
  page: { limit: number; afterSku?: string; position: number },
): Promise<(Omit<ProductStock, 'available'> & { feedCursor: number })[]> {
  const result = await db.query<Omit<ProductStock, 'available'> & { feedCursor: number }>({
    name: 'stock-page-as-of',
    text: `SELECT p.sku, p.base_unit_code AS "baseUnitCode",
                  (sl.on_hand - COALESCE(later.on_hand, 0))::text AS "onHand",
                  (sl.reserved - COALESCE(later.reserved, 0))::text AS reserved, b.position AS "feedCursor"
             FROM product p JOIN stock_level sl ON sl.product_id = p.id
             JOIN LATERAL (
               SELECT position, snapshot FROM feed_boundary WHERE position = $3
                ORDER BY committed_at DESC LIMIT 1) b ON true
             LEFT JOIN LATERAL (
               SELECT sum(m.qty_after - m.qty_before) AS on_hand, sum(m.reserved_after - m.reserved_before) AS reserved
                 FROM stock_movement m WHERE ${unseenBy('p.id')}
             ) later ON true
            WHERE $1::text IS NULL OR p.sku > $1::text
            ORDER BY p.sku
            LIMIT $2`,
    values: [page.afterSku ?? null, page.limit + 1, page.position],
  });
  return result.rows;
}

/**
 * Records a commit boundary at the feed's head when no committed event waits for a number (D40): for a Product
 * changed by a transaction that wrote no event, which no numbering run would place. The feed's lock first, then the
 * snapshot, as a numbering run takes them (src/events/sql.ts).
 */
export async function recordBoundaryAtHead(tx: Tx): Promise<void> {
  await tx.query('SELECT 1 FROM event_feed_state WHERE id = 1 FOR UPDATE');
  await tx.query(
    `INSERT INTO feed_boundary (position, committed_at, snapshot)
     SELECT sequenced_through, clock_timestamp(), pg_current_snapshot() FROM event_feed_state
      WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM event_outbox WHERE position IS NULL)`,
  );
}
