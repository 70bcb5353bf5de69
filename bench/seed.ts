import type pg from 'pg';
import { startProgress, step } from './progress.js';

/** Seeded SKUs are P-0000001 … ; the number of digits is fixed so every SKU has the same length. */
export const SKU_DIGITS = 7;
export const LOCATIONS = 1000;

export function productSku(prefix: string, n: number): string {
  return `${prefix}-${String(n).padStart(SKU_DIGITS, '0')}`;
}

/** The product columns a seeded, a bulk-posted and a raw-inserted product all have (same shape, same sizes). */
export function productFields(prefix: string, n: number): { sku: string; label: string; description: string } {
  return {
    sku: productSku(prefix, n),
    label: `Article ${String(n).padStart(SKU_DIGITS, '0')}`,
    description: 'Carton of twelve, stacked on EUR pallets',
  };
}

async function inChunks(
  label: string,
  from: number,
  to: number,
  chunk: number,
  run: (first: number, last: number) => Promise<unknown>,
): Promise<void> {
  if (to < from) return;
  const progress = startProgress(label, to - from + 1);
  for (let first = from; first <= to; first += chunk) {
    const last = Math.min(to, first + chunk - 1);
    await run(first, last);
    progress.update(last - from + 1, `${(last - from + 1).toLocaleString('en-US')} rows`);
  }
  progress.finish();
}

/** Location groups WH > ZONE-A and the Locations every TransportUnit stands on. */
export async function seedMasterData(pool: pg.Pool): Promise<void> {
  step('seeding location groups and locations…');
  await pool.query(`INSERT INTO location_group (name) VALUES ('WH')`);
  await pool.query(
    `INSERT INTO location_group (name, parent_id) SELECT 'ZONE-A', id FROM location_group WHERE name = 'WH'`,
  );
  await pool.query(
    `INSERT INTO location (location_id, erp_code, location_group_id)
     SELECT 'L-' || lpad(n::text, 4, '0'), 'E' || lpad(n::text, 4, '0'), g.id
       FROM generate_series(1, $1::int) AS n, location_group g WHERE g.name = 'ZONE-A'`,
    [LOCATIONS],
  );
}

/** Products `prefix-from` … `prefix-to`, set-based, in chunks so the progress bar moves. */
export async function seedProducts(pool: pg.Pool, prefix: string, from: number, to: number): Promise<void> {
  await inChunks(`seeding products ${prefix}-*`, from, to, 50_000, (first, last) =>
    pool.query(
      `INSERT INTO product (sku, label, description, base_unit_magnitude, base_unit_code, stock_zone)
       SELECT $1 || '-' || lpad(n::text, $4::int, '0'), 'Article ' || lpad(n::text, $4::int, '0'),
              'Carton of twelve, stacked on EUR pallets', 1, 'PC', 'A'
         FROM generate_series($2::int, $3::int) AS n`,
      [prefix, first, last, SKU_DIGITS],
    ),
  );
}

export interface StockShape {
  /** SKU prefix of the (already seeded) products the stock is of. */
  readonly productPrefix: string;
  /** Product numbers used, 1 … products; LoadUnit i holds product ((i - 1) mod products) + 1. */
  readonly products: number;
  /** TransportUnit business keys are `${tuPrefix}-0000001` …; each carries one LoadUnit at position 1. */
  readonly tuPrefix: string;
  readonly loadUnits: number;
  readonly unitsPerLoadUnit: number;
  readonly unitQuantity: number;
  /** Spread expiry dates over this many days (FEFO has something to order), or none. */
  readonly expiryDays?: number;
}

/**
 * TransportUnits standing on the Locations, one LoadUnit each (assigned to its one Product, D17), filled with
 * PackagingUnits; every unit gets its CREATE ledger row (D24) like one created through the API.
 */
export async function seedStock(pool: pg.Pool, shape: StockShape): Promise<void> {
  const { tuPrefix, productPrefix } = shape;
  await inChunks(`seeding load units ${tuPrefix}-*`, 1, shape.loadUnits, 50_000, async (first, last) => {
    await pool.query(
      `INSERT INTO transport_unit (bk, transport_unit_type, actual_location_id)
       SELECT $1 || '-' || lpad(n::text, $4::int, '0'), 'PALLET', l.id
         FROM generate_series($2::int, $3::int) AS n
         JOIN location l ON l.location_id = 'L-' || lpad((((n - 1) % $5::int) + 1)::text, 4, '0')`,
      [tuPrefix, first, last, SKU_DIGITS, LOCATIONS],
    );
    await pool.query(
      `INSERT INTO load_unit (transport_unit_id, physical_position, load_unit_type, product_id)
       SELECT tu.id, '1', 'BOX', p.id
         FROM generate_series($2::int, $3::int) AS n
         JOIN transport_unit tu ON tu.bk = $1 || '-' || lpad(n::text, $4::int, '0')
         JOIN product p ON p.sku = $5 || '-' || lpad((((n - 1) % $6::int) + 1)::text, $4::int, '0')`,
      [tuPrefix, first, last, SKU_DIGITS, productPrefix, shape.products],
    );
  });
  const perChunk = Math.max(1, Math.floor(100_000 / shape.unitsPerLoadUnit));
  await inChunks(
    `seeding packaging units in ${tuPrefix}-* (×${shape.unitsPerLoadUnit})`,
    1,
    shape.loadUnits,
    perChunk,
    (first, last) =>
      pool.query(
        `WITH lu AS (
           SELECT lu.id, lu.product_id, tu.bk FROM generate_series($2::int, $3::int) AS n
             JOIN transport_unit tu ON tu.bk = $1 || '-' || lpad(n::text, $4::int, '0')
             JOIN load_unit lu ON lu.transport_unit_id = tu.id AND lu.physical_position = '1'),
         pu AS (
           INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, expires_at)
           SELECT lu.product_id, $6::numeric, 'PC', lu.id,
                  CASE WHEN $7::int > 0 THEN date_trunc('day', now()) + (floor(random() * $7::int) || ' days')::interval END
             FROM lu CROSS JOIN generate_series(1, $5::int) AS k
           RETURNING p_key, product_id, qty_base, load_unit_id)
         INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                     reserved_before, reserved_after, to_ref, actor, request_id)
         SELECT pu.p_key, pu.product_id, 'CREATE', 'PC', 0, pu.qty_base, 0, 0,
                json_build_object('transportUnitBK', lu.bk, 'loadUnitPosition', '1'), 'bench-seed', 'bench-seed'
           FROM pu JOIN lu ON lu.id = pu.load_unit_id`,
        [tuPrefix, first, last, SKU_DIGITS, shape.unitsPerLoadUnit, shape.unitQuantity, shape.expiryDays ?? 0],
      ),
  );
}

/** Fresh statistics and a clean checkpoint, so no measured run pays for the seeding. */
export async function settle(pool: pg.Pool): Promise<void> {
  step('VACUUM ANALYZE and CHECKPOINT after seeding…');
  await pool.query('VACUUM ANALYZE');
  await pool.query('CHECKPOINT');
}

export async function countProducts(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ count: string }>('SELECT count(*) AS count FROM product');
  return Number(rows[0]?.count ?? 0);
}

/** A random sample of PackagingUnit keys in LoadUnits of the given TransportUnit prefix. */
export async function sampleUnitKeys(pool: pg.Pool, tuPrefix: string, size: number): Promise<string[]> {
  const { rows } = await pool.query<{ p_key: string }>(
    `SELECT pu.p_key FROM packaging_unit pu JOIN load_unit lu ON lu.id = pu.load_unit_id
       JOIN transport_unit tu ON tu.id = lu.transport_unit_id
      WHERE tu.bk LIKE $1 || '-%' ORDER BY random() LIMIT $2`,
    [tuPrefix, size],
  );
  return rows.map((row) => row.p_key);
}
