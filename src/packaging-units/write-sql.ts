import { columnOf } from '../db/columns.js';
import type { Tx } from '../db/tx.js';
import { UNIT_COLUMNS, type PackagingUnitRow } from './sql.js';

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
      columnOf(units, 'productId'),
      columnOf(units, 'qtyMagnitude'),
      columnOf(units, 'qtyCode'),
      columnOf(units, 'loadUnitId'),
      columnOf(units, 'locationId'),
      columnOf(units, 'parentId'),
      columnOf(units, 'state'),
      columnOf(units, 'dimension'),
      columnOf(units, 'weightMagnitude'),
      columnOf(units, 'weightCode'),
      columnOf(units, 'distribution'),
      columnOf(units, 'physicalPosition'),
      columnOf(units, 'serialNumber'),
      columnOf(units, 'expiresAt'),
      columnOf(units, 'labels'),
      columnOf(units, 'details'),
      columnOf(units, 'messageNo'),
      columnOf(units, 'messageText'),
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

/**
 * Locks the units `where` picks (a condition on `pu`, packaging_unit alone) in id order, the order every writer
 * uses, and reads them as PackagingUnitRow in the same round trip. The lock is taken in a CTE on that one table,
 * so after waiting for another writer PostgreSQL hands on each unit's newest version and leaves out one that no
 * longer matches. The Product, LoadUnit and TransportUnit columns are read in the statement's snapshot: callers
 * hold the lock of the LoadUnit or pick units by a Location, whose holder columns no concurrent writer changes.
 */
async function lockUnitRows(tx: Tx, name: string, where: string, values: unknown[]): Promise<PackagingUnitRow[]> {
  const result = await tx.query<PackagingUnitRow>({
    name,
    text: `WITH locked AS MATERIALIZED (SELECT * FROM packaging_unit pu WHERE ${where} ORDER BY pu.id FOR UPDATE)
           SELECT ${UNIT_COLUMNS}
             FROM locked pu
             JOIN product p ON p.id = pu.product_id
             LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
             LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
            ORDER BY pu.id`,
    values,
  });
  return result.rows;
}

/** Locks and reads the product's units in a LoadUnit the caller has locked (only those in `state` when given). */
export function lockUnitsOfProductInLoadUnit(
  tx: Tx,
  loadUnitId: number,
  productId: number,
  state?: string,
): Promise<PackagingUnitRow[]> {
  return lockUnitRows(
    tx,
    'lock-units-of-product-in-load-unit',
    'pu.load_unit_id = $1 AND pu.product_id = $2 AND ($3::text IS NULL OR pu.state = $3)',
    [loadUnitId, productId, state ?? null],
  );
}

/** Locks and reads the product's units on a Location. */
export function lockUnitsOfProductOnLocation(
  tx: Tx,
  locationId: number,
  productId: number,
): Promise<PackagingUnitRow[]> {
  return lockUnitRows(tx, 'lock-units-of-product-on-location', 'pu.location_id = $1 AND pu.product_id = $2', [
    locationId,
    productId,
  ]);
}

/** Sets a unit's quantity, and its reserved amount when `reservedBase` is given (a pick or an issue takes both). */
export async function updateUnitQuantity(
  tx: Tx,
  id: number,
  magnitude: string,
  code: string,
  reservedBase?: string,
): Promise<void> {
  await tx.query({
    name: 'update-unit-quantity',
    text: `UPDATE packaging_unit SET qty_magnitude = $2::numeric, qty_code = $3,
           reserved_base = COALESCE($4::numeric, reserved_base), ol = ol + 1, last_modified_dt = now()
      WHERE id = $1`,
    values: [id, magnitude, code, reservedBase ?? null],
  });
}

/** Sets the quantity and reserved amount of several units in one statement (a goods issue takes from each). */
export async function updateUnitQuantities(
  tx: Tx,
  units: readonly { id: number; magnitude: string; code: string; reservedBase: string }[],
): Promise<void> {
  if (units.length === 0) return;
  await tx.query({
    name: 'update-unit-quantities',
    text: `UPDATE packaging_unit pu SET qty_magnitude = v.magnitude, qty_code = v.code, reserved_base = v.reserved_base,
           ol = pu.ol + 1, last_modified_dt = now()
      FROM unnest($1::bigint[], $2::numeric[], $3::text[], $4::numeric[]) AS v(id, magnitude, code, reserved_base)
     WHERE pu.id = v.id`,
    values: [
      columnOf(units, 'id'),
      columnOf(units, 'magnitude'),
      columnOf(units, 'code'),
      columnOf(units, 'reservedBase'),
    ],
  });
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

/** What a split unit takes other than its source's fields: holder, state, message, reserved amount (a pick's). */
export interface SplitChanges {
  loadUnitId?: number | null;
  locationId?: number | null;
  state?: string;
  message?: { messageNo: string | null; messageText: string | null };
  reservedBase?: string;
}

/** The INSERT of a split off unit `$1`, parameters $1 to $11, without its RETURNING. */
function splitInsert(
  sourceId: number,
  qty: { magnitude: string; code: string },
  changes: SplitChanges,
): { text: string; values: unknown[] } {
  const moves = changes.loadUnitId !== undefined || changes.locationId !== undefined;
  return {
    text: `INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, location_id, parent_id, state,
                                 dimension, weight_magnitude, weight_code, distribution, physical_position,
                                 serial_number, expires_at, labels, details, message_no, message_text,
                                 reserved_base)
     SELECT product_id, $2::numeric, $3, CASE WHEN $4 THEN $5::bigint ELSE load_unit_id END,
            CASE WHEN $4 THEN $6::bigint ELSE location_id END, id, COALESCE($7, state), dimension, weight_magnitude,
            weight_code, distribution, physical_position, serial_number, expires_at, labels, details,
            CASE WHEN $8 THEN $9 ELSE message_no END, CASE WHEN $8 THEN $10 ELSE message_text END,
            COALESCE($11::numeric, 0)
       FROM packaging_unit WHERE id = $1`,
    values: [
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
      changes.reservedBase ?? null,
    ],
  };
}

/**
 * Splits `qty` off a unit into a new unit that records it as parent and copies its other fields; the holder,
 * state, message and reserved amount (a pick's, D32) may differ. The caller reduces the source in the same
 * transaction.
 */
export async function insertSplit(
  tx: Tx,
  sourceId: number,
  qty: { magnitude: string; code: string },
  changes: SplitChanges,
): Promise<{ id: number; pKey: string }> {
  const insert = splitInsert(sourceId, qty, changes);
  const result = await tx.query<{ id: number; pKey: string }>({
    name: 'insert-split',
    text: `${insert.text} RETURNING id, p_key AS "pKey"`,
    values: insert.values,
  });
  return result.rows[0]!;
}

/**
 * insertSplit with the source reduced to `rest` (its quantity and reserved amount after the split) by the same
 * statement, whose INSERT reads the source's other fields as they were (the UPDATE does not change them). Answers
 * both units as the statement left them, so that their events need no further read.
 */
export async function reduceAndSplit(
  tx: Tx,
  sourceId: number,
  qty: { magnitude: string; code: string },
  changes: SplitChanges,
  rest: { magnitude: string; code: string; reservedBase: string },
): Promise<{ source: PackagingUnitRow; split: PackagingUnitRow }> {
  const insert = splitInsert(sourceId, qty, changes);
  const result = await tx.query<PackagingUnitRow>({
    name: 'reduce-and-insert-split',
    text: `WITH source AS (
             UPDATE packaging_unit SET qty_magnitude = $12::numeric, qty_code = $13, reserved_base = $14::numeric,
                    ol = ol + 1, last_modified_dt = now()
              WHERE id = $1
          RETURNING *
           ), split AS (${insert.text} RETURNING *)
           SELECT ${UNIT_COLUMNS}
             FROM (SELECT * FROM source UNION ALL SELECT * FROM split) pu
             JOIN product p ON p.id = pu.product_id
             LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
             LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id`,
    values: [...insert.values, rest.magnitude, rest.code, rest.reservedBase],
  });
  return {
    source: result.rows.find((row) => row.id === sourceId)!,
    split: result.rows.find((row) => row.id !== sourceId)!,
  };
}

/** Moves the units to the holder; answers them as the statement left them, so their events need no further read. */
export async function updateUnitHolder(
  tx: Tx,
  ids: readonly number[],
  holder: { loadUnitId: number | null; locationId: number | null },
): Promise<PackagingUnitRow[]> {
  const result = await tx.query<PackagingUnitRow>({
    name: 'update-unit-holder',
    text: `WITH moved AS (
             UPDATE packaging_unit SET load_unit_id = $2, location_id = $3, ol = ol + 1, last_modified_dt = now()
              WHERE id = ANY($1::bigint[])
          RETURNING *
           )
           SELECT ${UNIT_COLUMNS}
             FROM moved pu
             JOIN product p ON p.id = pu.product_id
             LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
             LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
            ORDER BY pu.id`,
    values: [ids, holder.loadUnitId, holder.locationId],
  });
  return result.rows;
}
