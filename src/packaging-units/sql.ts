import type { Queryable, Tx } from '../db/tx.js';

export interface PackagingUnitRow {
  id: number;
  pKey: string;
  productId: number;
  productPKey: string;
  sku: string;
  productLabel: string | null;
  productBaseMagnitude: string;
  productBaseCode: string;
  qtyMagnitude: string;
  qtyCode: string;
  qtyBase: string;
  reservedBase: string;
  state: 'AVAILABLE' | 'LOCKED' | 'QC_LOCKED';
  messageNo: string | null;
  messageText: string | null;
  loadUnitId: number | null;
  loadUnitPKey: string | null;
  loadUnitPosition: string | null;
  loadUnitType: string | null;
  loadUnitLocked: boolean | null;
  transportUnitBK: string | null;
  locationId: number | null;
  dimension: unknown;
  weightMagnitude: string | null;
  weightCode: string | null;
  distribution: unknown;
  physicalPosition: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  labels: string[] | null;
  details: unknown;
  ol: number;
  createDt: Date;
}

export interface PackagingUnitValues {
  productId: number;
  qtyMagnitude: string;
  qtyCode: string;
  loadUnitId: number | null;
  locationId: number | null;
  parentId: number | null;
  state: string;
  dimension: string | null;
  weightMagnitude: string | null;
  weightCode: string | null;
  distribution: string | null;
  physicalPosition: string | null;
  serialNumber: string | null;
  expiresAt: string | null;
  labels: string | null;
  details: string | null;
  messageNo: string | null;
  messageText: string | null;
}

const SELECT_UNITS = `
  SELECT pu.id, pu.p_key AS "pKey", pu.product_id AS "productId", p.p_key AS "productPKey", p.sku,
         p.label AS "productLabel", p.base_unit_magnitude::text AS "productBaseMagnitude",
         p.base_unit_code AS "productBaseCode", pu.qty_magnitude::text AS "qtyMagnitude", pu.qty_code AS "qtyCode",
         pu.qty_base::text AS "qtyBase", pu.reserved_base::text AS "reservedBase", pu.state,
         pu.message_no AS "messageNo", pu.message_text AS "messageText", pu.load_unit_id AS "loadUnitId",
         lu.p_key AS "loadUnitPKey", lu.physical_position AS "loadUnitPosition", lu.load_unit_type AS "loadUnitType",
         lu.locked AS "loadUnitLocked", tu.bk AS "transportUnitBK", pu.location_id AS "locationId", pu.dimension,
         pu.weight_magnitude::text AS "weightMagnitude", pu.weight_code AS "weightCode", pu.distribution,
         pu.physical_position AS "physicalPosition", pu.serial_number AS "serialNumber", pu.expires_at AS "expiresAt",
         pu.labels, pu.details, pu.ol, pu.create_dt AS "createDt"
    FROM packaging_unit pu
    JOIN product p ON p.id = pu.product_id
    LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
    LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id`;

/** D19: units that can be reserved right now. */
const RESERVABLE = `pu.state = 'AVAILABLE' AND p.availability_state = 'AVAILABLE' AND pu.qty_base > pu.reserved_base
                    AND (lu.id IS NULL OR NOT lu.locked)`;

/** Whitelisted sort columns (D19): a client's text never reaches the SQL. */
export const SORT_COLUMNS = {
  createDt: 'pu.create_dt',
  expiresAt: 'pu.expires_at',
  quantity: 'pu.qty_base',
  pKey: 'pu.p_key',
} as const;

export interface Sort {
  readonly property: keyof typeof SORT_COLUMNS;
  readonly direction: 'ASC' | 'DESC';
}

const orderBy = (sort: Sort): string =>
  `ORDER BY ${SORT_COLUMNS[sort.property]} ${sort.direction} NULLS LAST, pu.id ${sort.direction}`;

export async function selectUnitByPKey(db: Queryable, pKey: string): Promise<PackagingUnitRow | undefined> {
  const result = await db.query<PackagingUnitRow>(`${SELECT_UNITS} WHERE pu.p_key = $1::uuid`, [pKey]);
  return result.rows[0];
}

export async function selectUnitsByIds(db: Queryable, ids: readonly number[]): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(`${SELECT_UNITS} WHERE pu.id = ANY($1::bigint[]) ORDER BY pu.id`, [
    ids,
  ]);
  return result.rows;
}

export async function selectUnitsInLoadUnit(db: Queryable, loadUnitId: number): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(`${SELECT_UNITS} WHERE pu.load_unit_id = $1 ORDER BY pu.id`, [
    loadUnitId,
  ]);
  return result.rows;
}

export async function selectUnitsOnTransportUnit(db: Queryable, transportUnitBK: string): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS} WHERE tu.bk = $1 ORDER BY lu.physical_position, pu.id`,
    [transportUnitBK],
  );
  return result.rows;
}

export async function selectUnitsAtLoadUnitPosition(
  db: Queryable,
  transportUnitBK: string,
  position: string,
): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS} WHERE tu.bk = $1 AND lu.physical_position = $2 ORDER BY pu.id`,
    [transportUnitBK, position],
  );
  return result.rows;
}

export async function selectUnitsOnLocation(db: Queryable, locationId: number): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(`${SELECT_UNITS} WHERE pu.location_id = $1 ORDER BY pu.id`, [
    locationId,
  ]);
  return result.rows;
}

export async function selectReservableUnitsOfProduct(
  db: Queryable,
  productId: number,
  sort: Sort,
  limit: number,
): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS} WHERE pu.product_id = $1 AND ${RESERVABLE} ${orderBy(sort)} LIMIT $2`,
    [productId, limit],
  );
  return result.rows;
}

/** Units of the product in LoadUnits on TransportUnits standing in the groups, or lying on their Locations. */
export async function selectReservableUnitsOfProductInGroups(
  db: Queryable,
  productId: number,
  groupIds: readonly number[],
  sort: Sort,
  limit: number,
): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS}
      LEFT JOIN location held_on ON held_on.id = COALESCE(pu.location_id, tu.actual_location_id)
     WHERE pu.product_id = $1 AND ${RESERVABLE} AND held_on.location_group_id = ANY($2::bigint[])
     ${orderBy(sort)} LIMIT $3`,
    [productId, groupIds, limit],
  );
  return result.rows;
}

const column = <K extends keyof PackagingUnitValues>(
  rows: readonly PackagingUnitValues[],
  key: K,
): PackagingUnitValues[K][] => rows.map((row) => row[key]);

/** Inserts the units in one statement; ids come back in the order of `units`. */
export async function insertUnits(
  tx: Tx,
  units: readonly PackagingUnitValues[],
): Promise<{ id: number; pKey: string }[]> {
  const result = await tx.query<{ id: number; pKey: string; ordinal: number }>(
    `INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, location_id, parent_id, state,
                                 dimension, weight_magnitude, weight_code, distribution, physical_position,
                                 serial_number, expires_at, labels, details, message_no, message_text)
     SELECT product_id, qty_magnitude, qty_code, load_unit_id, location_id, parent_id, state, dimension,
            weight_magnitude, weight_code, distribution, physical_position, serial_number, expires_at,
            CASE WHEN labels IS NOT NULL THEN ARRAY(SELECT json_array_elements_text(labels)) END, details,
            message_no, message_text
       FROM unnest($1::bigint[], $2::numeric[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[],
                   $8::json[], $9::numeric[], $10::text[], $11::json[], $12::text[], $13::text[], $14::timestamptz[],
                   $15::json[], $16::json[], $17::text[], $18::text[]) WITH ORDINALITY
         AS v(product_id, qty_magnitude, qty_code, load_unit_id, location_id, parent_id, state, dimension,
              weight_magnitude, weight_code, distribution, physical_position, serial_number, expires_at, labels,
              details, message_no, message_text, ordinal)
      ORDER BY ordinal
     RETURNING id, p_key AS "pKey"`,
    [
      column(units, 'productId'),
      column(units, 'qtyMagnitude'),
      column(units, 'qtyCode'),
      column(units, 'loadUnitId'),
      column(units, 'locationId'),
      column(units, 'parentId'),
      column(units, 'state'),
      column(units, 'dimension'),
      column(units, 'weightMagnitude'),
      column(units, 'weightCode'),
      column(units, 'distribution'),
      column(units, 'physicalPosition'),
      column(units, 'serialNumber'),
      column(units, 'expiresAt'),
      column(units, 'labels'),
      column(units, 'details'),
      column(units, 'messageNo'),
      column(units, 'messageText'),
    ],
  );
  // Identity values are drawn in insertion order, which ORDER BY ordinal fixes.
  return result.rows.sort((a, b) => a.id - b.id);
}

/** Locks units in id order (the fixed order every writer uses, so writers cannot deadlock each other). */
export async function lockUnitsByIds(tx: Tx, ids: readonly number[]): Promise<void> {
  await tx.query('SELECT id FROM packaging_unit WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE', [ids]);
}

export async function lockUnitIdByPKey(tx: Tx, pKey: string): Promise<number | undefined> {
  const result = await tx.query<{ id: number }>('SELECT id FROM packaging_unit WHERE p_key = $1::uuid FOR UPDATE', [
    pKey,
  ]);
  return result.rows[0]?.id;
}

/** Locks the product's units in a LoadUnit (only those in `state` when given), oldest first. */
export async function lockUnitsOfProductInLoadUnit(
  tx: Tx,
  loadUnitId: number,
  productId: number,
  state?: string,
): Promise<number[]> {
  const result = await tx.query<{ id: number }>(
    `SELECT id FROM packaging_unit WHERE load_unit_id = $1 AND product_id = $2 AND ($3::text IS NULL OR state = $3)
      ORDER BY id FOR UPDATE`,
    [loadUnitId, productId, state ?? null],
  );
  return result.rows.map((row) => row.id);
}

export async function lockUnitsOfProductOnLocation(tx: Tx, locationId: number, productId: number): Promise<number[]> {
  const result = await tx.query<{ id: number }>(
    'SELECT id FROM packaging_unit WHERE location_id = $1 AND product_id = $2 ORDER BY id FOR UPDATE',
    [locationId, productId],
  );
  return result.rows.map((row) => row.id);
}

export async function updateUnitQuantity(tx: Tx, id: number, magnitude: string, code: string): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit SET qty_magnitude = $2::numeric, qty_code = $3, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1`,
    [id, magnitude, code],
  );
}

export async function updateUnitState(
  tx: Tx,
  id: number,
  state: string,
  message: { messageNo: string | null; messageText: string | null },
): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit SET state = $2, message_no = $3, message_text = $4, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1`,
    [id, state, message.messageNo, message.messageText],
  );
}

export async function deleteUnits(tx: Tx, ids: readonly number[]): Promise<void> {
  await tx.query('DELETE FROM packaging_unit WHERE id = ANY($1::bigint[])', [ids]);
}

/**
 * Splits `qty` off a unit into a new unit that records it as parent and copies its other fields; the holder,
 * state and message may differ. The caller reduces the source in the same transaction.
 */
export async function insertSplit(
  tx: Tx,
  sourceId: number,
  qty: { magnitude: string; code: string },
  changes: {
    loadUnitId?: number | null;
    locationId?: number | null;
    state?: string;
    message?: { messageNo: string | null; messageText: string | null };
  },
): Promise<{ id: number; pKey: string }> {
  const moves = changes.loadUnitId !== undefined || changes.locationId !== undefined;
  const result = await tx.query<{ id: number; pKey: string }>(
    `INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, location_id, parent_id, state,
                                 dimension, weight_magnitude, weight_code, distribution, physical_position,
                                 serial_number, expires_at, labels, details, message_no, message_text)
     SELECT product_id, $2::numeric, $3, CASE WHEN $4 THEN $5::bigint ELSE load_unit_id END,
            CASE WHEN $4 THEN $6::bigint ELSE location_id END, id, COALESCE($7, state), dimension, weight_magnitude,
            weight_code, distribution, physical_position, serial_number, expires_at, labels, details,
            CASE WHEN $8 THEN $9 ELSE message_no END, CASE WHEN $8 THEN $10 ELSE message_text END
       FROM packaging_unit WHERE id = $1
     RETURNING id, p_key AS "pKey"`,
    [
      sourceId,
      qty.magnitude,
      qty.code,
      moves,
      changes.loadUnitId ?? null,
      changes.locationId ?? null,
      changes.state ?? null,
      changes.message !== undefined,
      changes.message?.messageNo ?? null,
      changes.message?.messageText ?? null,
    ],
  );
  return result.rows[0]!;
}

export async function updateUnitHolder(
  tx: Tx,
  ids: readonly number[],
  holder: { loadUnitId: number | null; locationId: number | null },
): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit SET load_unit_id = $2, location_id = $3, ol = ol + 1, last_modified_dt = now()
      WHERE id = ANY($1::bigint[])`,
    [ids, holder.loadUnitId, holder.locationId],
  );
}
