import { copyRow } from '../db/copy.js';
import type { Tx } from '../db/tx.js';
import type { Actor } from '../ledger/sql.js';
import type { SentUnitFields } from './create-service.js';

/**
 * The staging tables of one stock intake (D35), the session's own and dropped at commit: `unit_intake` holds one
 * row per line, `intake_load_unit` one per LoadUnit the lines name (with its first line, whose loadUnitType and
 * Product count, as they would when the lines were created one by one), `intake_unit` the units inserted.
 */
export async function createIntakeTables(tx: Tx): Promise<void> {
  await tx.query(
    `CREATE TEMPORARY TABLE unit_intake (
       line integer NOT NULL, transport_unit_bk text, lu_pos text, load_unit_type text, location_ref text,
       sku text NOT NULL, qty_magnitude numeric NOT NULL, qty_code text NOT NULL, dimension json,
       weight_magnitude numeric, weight_code text, distribution json, physical_position text, serial_number text,
       expires_at timestamptz, labels json, details json
     ) ON COMMIT DROP`,
  );
  await tx.query(
    `CREATE TEMPORARY TABLE intake_load_unit (
       transport_unit_bk text NOT NULL, lu_pos text NOT NULL, first_line integer NOT NULL, load_unit_type text,
       first_sku text NOT NULL, load_unit_id bigint, created boolean NOT NULL DEFAULT false,
       PRIMARY KEY (transport_unit_bk, lu_pos)
     ) ON COMMIT DROP`,
  );
  await tx.query('CREATE TEMPORARY TABLE intake_unit (id bigint PRIMARY KEY) ON COMMIT DROP');
}

export const COPY_INTO_UNIT_INTAKE = `COPY unit_intake (line, transport_unit_bk, lu_pos, load_unit_type, location_ref,
                                   sku, qty_magnitude, qty_code, dimension, weight_magnitude, weight_code,
                                   distribution, physical_position, serial_number, expires_at, labels, details)
     FROM STDIN`;

export interface IntakeHolder {
  readonly transportUnitBK?: string;
  readonly luPos?: string;
  readonly loadUnitType?: string | null;
  readonly locationId?: string;
}

export function intakeRow(line: number, holder: IntakeHolder, sku: string, fields: SentUnitFields): string {
  const loadUnitType = holder.loadUnitType?.trim() ? holder.loadUnitType : null;
  return copyRow([
    line,
    holder.transportUnitBK,
    holder.luPos,
    loadUnitType,
    holder.locationId,
    sku,
    fields.qtyMagnitude,
    fields.qtyCode,
    fields.dimension,
    fields.weightMagnitude,
    fields.weightCode,
    fields.distribution,
    fields.physicalPosition,
    fields.serialNumber,
    fields.expiresAt,
    fields.labels,
    fields.details,
  ]);
}

/** Gathers the LoadUnits the lines name, each with its first line; answers whether there are any. */
export async function gatherIntakeLoadUnits(tx: Tx): Promise<boolean> {
  // Autovacuum never analyzes a temporary table: the joins below would be planned blind.
  await tx.query('ANALYZE unit_intake');
  const result = await tx.query(
    `INSERT INTO intake_load_unit (transport_unit_bk, lu_pos, first_line, load_unit_type, first_sku)
     SELECT DISTINCT ON (transport_unit_bk, lu_pos) transport_unit_bk, lu_pos, line, load_unit_type, sku
       FROM unit_intake WHERE transport_unit_bk IS NOT NULL
      ORDER BY transport_unit_bk, lu_pos, line`,
  );
  await tx.query('ANALYZE intake_load_unit');
  return (result.rowCount ?? 0) > 0;
}

/** D18: the first line (by number) naming a SKU no Product has. */
export async function firstUnknownSku(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ sku: string }>(
    `SELECT i.sku FROM unit_intake i WHERE NOT EXISTS (SELECT 1 FROM product p WHERE p.sku = i.sku)
      ORDER BY i.line LIMIT 1`,
  );
  return result.rows[0]?.sku;
}

/** D2: the first line whose quantity is of another kind than its Product's baseUnit, with that kind. */
export async function firstQuantityOfAnotherKind(tx: Tx): Promise<{ line: number; kind: string } | undefined> {
  const result = await tx.query<{ line: number; kind: string }>(
    `SELECT i.line, unit_kind(p.base_unit_code) AS kind
       FROM unit_intake i JOIN product p ON p.sku = i.sku
      WHERE unit_kind(i.qty_code) <> unit_kind(p.base_unit_code)
      ORDER BY i.line LIMIT 1`,
  );
  return result.rows[0];
}

/** D14: the first line naming a Location that does not exist. */
export async function firstUnknownLocation(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ locationId: string }>(
    `SELECT i.location_ref AS "locationId" FROM unit_intake i
      WHERE i.location_ref IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM location l WHERE l.location_id = i.location_ref)
      ORDER BY i.line LIMIT 1`,
  );
  return result.rows[0]?.locationId;
}

/** Notes the id of every LoadUnit named that exists, locking them all in id order (the order every writer uses). */
async function lockExistingLoadUnits(tx: Tx): Promise<void> {
  await tx.query(
    `UPDATE intake_load_unit il SET load_unit_id = lu.id
       FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
      WHERE il.load_unit_id IS NULL AND tu.bk = il.transport_unit_bk AND lu.physical_position = il.lu_pos`,
  );
  await tx.query(
    `SELECT id FROM load_unit WHERE id IN (SELECT load_unit_id FROM intake_load_unit) ORDER BY id FOR UPDATE`,
  );
}

/**
 * The LoadUnits named, found or created (TransportUnits registered on the spot, D15), all locked. A LoadUnit to
 * create whose first line gives no loadUnitType is answered (the single create's 400) and nothing is created.
 * Creation yields to a concurrent one (ON CONFLICT DO NOTHING), whose LoadUnit is then found and locked.
 */
export async function obtainIntakeLoadUnits(
  tx: Tx,
): Promise<{ missingType?: { position: string; transportUnitBK: string } }> {
  await lockExistingLoadUnits(tx);
  const missingType = await tx.query<{ position: string; transportUnitBK: string }>(
    `SELECT lu_pos AS position, transport_unit_bk AS "transportUnitBK" FROM intake_load_unit
      WHERE load_unit_id IS NULL AND load_unit_type IS NULL ORDER BY first_line LIMIT 1`,
  );
  if (missingType.rows[0]) return { missingType: missingType.rows[0] };
  await tx.query(
    `INSERT INTO transport_unit (bk)
     SELECT transport_unit_bk FROM intake_load_unit WHERE load_unit_id IS NULL
      GROUP BY transport_unit_bk ORDER BY min(first_line)
     ON CONFLICT (bk) DO NOTHING`,
  );
  await tx.query(
    `WITH created AS (
       INSERT INTO load_unit (transport_unit_id, physical_position, load_unit_type)
       SELECT tu.id, il.lu_pos, il.load_unit_type
         FROM intake_load_unit il JOIN transport_unit tu ON tu.bk = il.transport_unit_bk
        WHERE il.load_unit_id IS NULL
        ORDER BY il.first_line
       ON CONFLICT (transport_unit_id, physical_position) DO NOTHING
       RETURNING id, transport_unit_id, physical_position)
     UPDATE intake_load_unit il SET load_unit_id = c.id, created = true
       FROM created c JOIN transport_unit tu ON tu.id = c.transport_unit_id
      WHERE tu.bk = il.transport_unit_bk AND c.physical_position = il.lu_pos`,
  );
  await lockExistingLoadUnits(tx);
  return {};
}

/** A line D17 refuses, with its LoadUnit: `created` by this intake (then gone with its rollback) or stored before. */
export interface RefusedIntakeLine {
  readonly line: number;
  readonly loadUnitPKey: string;
  readonly created: boolean;
  readonly transportUnitBK: string;
  readonly luPos: string;
  readonly sku: string;
}

/**
 * D17: the first line putting a Product into a LoadUnit assigned to, or carrying, another one, or into a LoadUnit
 * an earlier line of the intake put another Product into.
 */
export async function firstOtherProductInLoadUnit(tx: Tx): Promise<RefusedIntakeLine | undefined> {
  const result = await tx.query<RefusedIntakeLine>(
    `SELECT line, "loadUnitPKey", created, "transportUnitBK", "luPos", sku FROM (
       SELECT il.first_line AS line, lu.p_key AS "loadUnitPKey", il.created, il.transport_unit_bk AS "transportUnitBK",
              il.lu_pos AS "luPos", il.first_sku AS sku
         FROM intake_load_unit il JOIN load_unit lu ON lu.id = il.load_unit_id JOIN product p ON p.sku = il.first_sku
        WHERE lu.product_id <> p.id
           OR EXISTS (SELECT 1 FROM packaging_unit pu
                       WHERE pu.load_unit_id = lu.id AND pu.product_id <> p.id AND pu.qty_magnitude > 0)
       UNION ALL
       SELECT i.line, lu.p_key, il.created, il.transport_unit_bk, il.lu_pos, i.sku
         FROM unit_intake i
              JOIN intake_load_unit il ON il.transport_unit_bk = i.transport_unit_bk AND il.lu_pos = i.lu_pos
              JOIN load_unit lu ON lu.id = il.load_unit_id
        WHERE i.sku <> il.first_sku) refused
      ORDER BY line LIMIT 1`,
  );
  return result.rows[0];
}

/**
 * Assigns each LoadUnit without a Product the Product of its first line (D17, as the single create does).
 * Answers the LoadUnits with an event, by first line: `lu.event.created` for those created (rendered after the
 * assignment), `lu.event.changed` for existing ones the assignment changed.
 */
export async function assignIntakeProducts(
  tx: Tx,
): Promise<{ id: number; type: 'lu.event.created' | 'lu.event.changed' }[]> {
  const result = await tx.query<{ id: string; type: 'lu.event.created' | 'lu.event.changed' }>(
    `WITH assigned AS (
       UPDATE load_unit lu SET product_id = p.id, ol = lu.ol + 1, last_modified_dt = now()
         FROM intake_load_unit il JOIN product p ON p.sku = il.first_sku
        WHERE lu.id = il.load_unit_id AND lu.product_id IS NULL
       RETURNING lu.id)
     SELECT il.load_unit_id AS id, CASE WHEN il.created THEN 'lu.event.created' ELSE 'lu.event.changed' END AS type
       FROM intake_load_unit il
      WHERE il.created OR il.load_unit_id IN (SELECT id FROM assigned)
      ORDER BY il.first_line`,
  );
  return result.rows.map((row) => ({ id: Number(row.id), type: row.type }));
}

/** Inserts one AVAILABLE unit per line, in line order, noting their ids in intake_unit. */
export async function insertIntakeUnits(tx: Tx): Promise<void> {
  await tx.query(
    `WITH inserted AS (
       INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, location_id, state, dimension,
                                   weight_magnitude, weight_code, distribution, physical_position, serial_number,
                                   expires_at, labels, details)
       SELECT p.id, i.qty_magnitude, i.qty_code, il.load_unit_id, l.id, 'AVAILABLE', i.dimension,
              i.weight_magnitude, i.weight_code, i.distribution, i.physical_position, i.serial_number, i.expires_at,
              CASE WHEN i.labels IS NOT NULL THEN ARRAY(SELECT json_array_elements_text(i.labels)) END, i.details
         FROM unit_intake i
              JOIN product p ON p.sku = i.sku
              LEFT JOIN intake_load_unit il ON il.transport_unit_bk = i.transport_unit_bk AND il.lu_pos = i.lu_pos
              LEFT JOIN location l ON l.location_id = i.location_ref
        ORDER BY i.line
       RETURNING id)
     INSERT INTO intake_unit (id) SELECT id FROM inserted`,
  );
}

/**
 * D24: a CREATE row per inserted unit, as the single create writes it (from nothing to its quantity in the
 * kind's smallest unit, to its LoadUnit or Location).
 */
export async function insertIntakeMovements(tx: Tx, actor: Actor): Promise<number> {
  const result = await tx.query(
    `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                 reserved_before, reserved_after, to_ref, actor, request_id)
     SELECT pu.p_key, pu.product_id, 'CREATE', CASE unit_kind(pu.qty_code) WHEN 'Weight' THEN 'MG' ELSE 'PC' END,
            0, trim_scale(pu.qty_base), 0, 0,
            CASE WHEN pu.location_id IS NOT NULL THEN json_build_object('locationId', l.location_id)
                 ELSE json_build_object('transportUnitBK', tu.bk, 'loadUnitPosition', lu.physical_position) END,
            $1, $2
       FROM intake_unit iu
            JOIN packaging_unit pu ON pu.id = iu.id
            LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
            LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
            LEFT JOIN location l ON l.id = pu.location_id
      ORDER BY iu.id`,
    [actor.subject, actor.requestId],
  );
  return result.rowCount ?? 0;
}

/** The ids of the inserted units after `afterId`, the next `limit` of them in line order (identity values are
 * drawn in insertion order, which the insert's ORDER BY line fixes). */
export async function intakeUnitIdsAfter(tx: Tx, afterId: number, limit: number): Promise<number[]> {
  const result = await tx.query<{ id: string }>('SELECT id FROM intake_unit WHERE id > $1 ORDER BY id LIMIT $2', [
    afterId,
    limit,
  ]);
  return result.rows.map((row) => Number(row.id));
}
