import type { Queryable, Tx } from '../db/tx.js';

/** A LoadUnit with the business key of its TransportUnit, as every read returns it. */
export interface LoadUnitRow {
  id: number;
  pKey: string;
  transportUnitId: number;
  transportUnitBK: string;
  physicalPosition: string;
  label: string | null;
  type: string;
  locked: boolean;
  productId: number | null;
  dimension: unknown;
  ol: number;
  createDt: Date;
}

/** The part of a Product a LoadUnit embeds. */
export interface ProductSummaryRow {
  id: number;
  pKey: string;
  sku: string;
  label: string | null;
  baseUnitMagnitude: string;
  baseUnitCode: string;
  description: string | null;
  availabilityState: string;
  /** Part of the LoadUnit's entity tag: the LoadUnit embeds its Product. */
  ol: number;
}

// bigint columns arrive as strings unless a type parser is installed; Number() reads both.
type Id = string | number;

/** A LoadUnit as its columns arrive. */
export interface RawLoadUnit {
  id: Id;
  p_key: string;
  transport_unit_id: Id;
  transport_unit_bk: string;
  physical_position: string;
  label: string | null;
  load_unit_type: string;
  locked: boolean;
  product_id: Id | null;
  dimension: unknown;
  ol: number;
  create_dt: Date;
}

export function toLoadUnit(raw: RawLoadUnit): LoadUnitRow {
  return {
    id: Number(raw.id),
    pKey: raw.p_key,
    transportUnitId: Number(raw.transport_unit_id),
    transportUnitBK: raw.transport_unit_bk,
    physicalPosition: raw.physical_position,
    label: raw.label,
    type: raw.load_unit_type,
    locked: raw.locked,
    productId: raw.product_id === null ? null : Number(raw.product_id),
    dimension: raw.dimension,
    ol: raw.ol,
    createDt: raw.create_dt,
  };
}

const SELECT_LOAD_UNIT = `
  SELECT lu.id, lu.p_key, lu.transport_unit_id, tu.bk AS transport_unit_bk, lu.physical_position, lu.label,
         lu.load_unit_type, lu.locked, lu.product_id, lu.dimension, lu.ol, lu.create_dt
    FROM load_unit lu
    JOIN transport_unit tu ON tu.id = lu.transport_unit_id`;

export async function selectLoadUnitByPKey(db: Queryable, pKey: string): Promise<LoadUnitRow | undefined> {
  const result = await db.query<RawLoadUnit>(`${SELECT_LOAD_UNIT} WHERE lu.p_key = $1::uuid`, [pKey]);
  const raw = result.rows[0];
  return raw && toLoadUnit(raw);
}

/** The LoadUnits with these internal ids, in id order (the re-read behind their events). */
export async function selectLoadUnitsByIds(db: Queryable, ids: readonly number[]): Promise<LoadUnitRow[]> {
  const result = await db.query<RawLoadUnit>({
    name: 'load-units-by-ids',
    text: `${SELECT_LOAD_UNIT} WHERE lu.id = ANY($1::bigint[]) ORDER BY lu.id`,
    values: [ids],
  });
  return result.rows.map(toLoadUnit);
}

export async function lockLoadUnitByPKey(tx: Tx, pKey: string): Promise<LoadUnitRow | undefined> {
  const result = await tx.query<RawLoadUnit>({
    name: 'lock-load-unit-by-pkey',
    text: `${SELECT_LOAD_UNIT} WHERE lu.p_key = $1::uuid FOR UPDATE OF lu`,
    values: [pKey],
  });
  const raw = result.rows[0];
  return raw && toLoadUnit(raw);
}

export async function lockLoadUnitAtPosition(
  tx: Tx,
  transportUnitBK: string,
  position: string,
): Promise<LoadUnitRow | undefined> {
  const result = await tx.query<RawLoadUnit>({
    name: 'lock-load-unit-at-position',
    text: `${SELECT_LOAD_UNIT} WHERE tu.bk = $1::text AND lu.physical_position = $2::text FOR UPDATE OF lu`,
    values: [transportUnitBK, position],
  });
  const raw = result.rows[0];
  return raw && toLoadUnit(raw);
}

// Position order: numbers in numeric order ("2" before "10"), then the rest; 'Infinity' puts the rest last as NULLS
// LAST would, and keeps the key comparable as a row for paging.
const positionKey = (alias: string): string =>
  `COALESCE(substring(${alias}.physical_position FROM '^[0-9]+')::numeric, 'Infinity'),
   ${alias}.physical_position COLLATE "C", ${alias}.id`;

/** A page of the TransportUnit's LoadUnits by position: `limit` after the LoadUnit with id `after`, or the first. */
export async function selectLoadUnitsOfTransportUnit(
  db: Queryable,
  transportUnitId: number,
  page: { limit: number; after?: number },
): Promise<LoadUnitRow[]> {
  const result = await db.query<RawLoadUnit>(
    `${SELECT_LOAD_UNIT}
      WHERE lu.transport_unit_id = $1::bigint
        AND ($2::bigint IS NULL OR (${positionKey('lu')}) > (SELECT ${positionKey('c')} FROM load_unit c WHERE c.id = $2::bigint))
      ORDER BY ${positionKey('lu')}
      LIMIT $3`,
    [transportUnitId, page.after ?? null, page.limit],
  );
  return result.rows.map(toLoadUnit);
}

/**
 * Locks the TransportUnit row. FOR UPDATE (not NO KEY UPDATE) on purpose: it conflicts with the key-share lock
 * every LoadUnit insert takes on its TransportUnit, so a divide and any concurrent LoadUnit creation on the same
 * TransportUnit are serialised, and the divide's count of LoadUnits stays true until it commits.
 */
export async function lockTransportUnitRow(tx: Tx, transportUnitId: number): Promise<void> {
  await tx.query('SELECT id FROM transport_unit WHERE id = $1::bigint FOR UPDATE', [transportUnitId]);
}

export async function selectPositionsOnTransportUnit(db: Queryable, transportUnitId: number): Promise<string[]> {
  const result = await db.query<{ physical_position: string }>(
    'SELECT physical_position FROM load_unit WHERE transport_unit_id = $1::bigint ORDER BY id',
    [transportUnitId],
  );
  return result.rows.map((row) => row.physical_position);
}

/** Creates a LoadUnit at each position that is still free, in one statement; answers the ids it created. */
export async function insertLoadUnits(
  tx: Tx,
  transportUnitId: number,
  positions: readonly string[],
  loadUnitType: string,
): Promise<number[]> {
  if (positions.length === 0) return [];
  const result = await tx.query<{ id: Id }>(
    `INSERT INTO load_unit (transport_unit_id, physical_position, load_unit_type)
     SELECT $1::bigint, v.position, $3::text
       FROM unnest($2::text[]) WITH ORDINALITY AS v(position, n)
      ORDER BY v.n
     ON CONFLICT (transport_unit_id, physical_position) DO NOTHING
     RETURNING id`,
    [transportUnitId, positions, loadUnitType],
  );
  // Identity values are drawn in insertion order, which ORDER BY v.n fixes.
  return result.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}

export async function updateLoadUnitProduct(tx: Tx, loadUnitId: number, productId: number): Promise<boolean> {
  const result = await tx.query(
    `UPDATE load_unit SET product_id = $2::bigint, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1::bigint AND product_id IS DISTINCT FROM $2::bigint`,
    [loadUnitId, productId],
  );
  return result.rowCount === 1;
}

/** Sets `locked`; `ol` rises only when it actually changes (D4). */
export async function updateLoadUnitLocked(tx: Tx, loadUnitId: number, locked: boolean): Promise<boolean> {
  const result = await tx.query(
    `UPDATE load_unit SET locked = $2::boolean, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1::bigint AND locked IS DISTINCT FROM $2::boolean`,
    [loadUnitId, locked],
  );
  return result.rowCount === 1;
}

/** Whether the LoadUnit carries a PackagingUnit (with something in it) of another Product than this one. */
export async function carriesOtherProduct(db: Queryable, loadUnitId: number, productId: number): Promise<boolean> {
  const result = await db.query<{ carries: boolean }>({
    name: 'load-unit-carries-other-product',
    text: `SELECT EXISTS (SELECT 1 FROM packaging_unit
                     WHERE load_unit_id = $1::bigint AND product_id <> $2::bigint AND qty_magnitude > 0) AS carries`,
    values: [loadUnitId, productId],
  });
  return result.rows[0]?.carries ?? false;
}

/** The columns of a ProductSummaryRow, as they arrive. */
export interface RawProductSummary {
  id: Id;
  p_key: string;
  sku: string;
  label: string | null;
  base_unit_magnitude: string;
  base_unit_code: string;
  description: string | null;
  availability_state: string;
  ol: number;
}

export function toProductSummary(raw: RawProductSummary): ProductSummaryRow {
  return {
    id: Number(raw.id),
    pKey: raw.p_key,
    sku: raw.sku,
    label: raw.label,
    baseUnitMagnitude: raw.base_unit_magnitude,
    baseUnitCode: raw.base_unit_code,
    description: raw.description,
    availabilityState: raw.availability_state,
    ol: raw.ol,
  };
}

export async function selectProductSummaries(db: Queryable, ids: readonly number[]): Promise<ProductSummaryRow[]> {
  const result = await db.query<RawProductSummary>(
    `SELECT id, p_key, sku, label, base_unit_magnitude::text AS base_unit_magnitude, base_unit_code, description,
            availability_state, ol
       FROM product WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  return result.rows.map(toProductSummary);
}
