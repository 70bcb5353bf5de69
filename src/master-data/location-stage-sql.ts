import { copyRow } from '../db/copy.js';
import type { Tx } from '../db/tx.js';
import type { LocationUpsert } from './schemas.js';

/**
 * The staging table of one `PUT /v1/locations` (issue 34 item 5): one row per Location of the body, `line` being its
 * index there, the defaults of optional fields applied. Temporary and dropped at commit: written without WAL.
 */
export async function createLocationStage(tx: Tx): Promise<void> {
  await tx.query(
    `CREATE TEMPORARY TABLE location_stage (
       line integer NOT NULL, location_id text NOT NULL, erp_code text, group_name text,
       incoming_active boolean NOT NULL, outgoing_active boolean NOT NULL, plc_state integer NOT NULL,
       description text, no_max_transport_units integer
     ) ON COMMIT DROP`,
  );
}

export const COPY_INTO_LOCATION_STAGE = `COPY location_stage (line, location_id, erp_code, group_name, incoming_active,
                                                   outgoing_active, plc_state, description, no_max_transport_units)
     FROM STDIN`;

/** A Location as PUT replaces it: optional fields left out take their defaults. */
export function locationStageRow(location: LocationUpsert, line: number): string {
  return copyRow([
    line,
    location.locationId,
    location.erpCode ?? null,
    location.locationGroupName ?? null,
    location.incomingActive ?? true,
    location.outgoingActive ?? true,
    location.plcState ?? 0,
    location.description ?? null,
    location.noMaxTransportUnits ?? null,
  ]);
}

/** Temporary tables are never analysed by autovacuum: without statistics the joins below would be planned blind. */
export async function analyzeLocationStage(tx: Tx): Promise<void> {
  await tx.query('ANALYZE location_stage');
}

/** Each line repeating the locationId of an earlier one, with the line that named it first; in line order. */
export async function selectStagedDuplicateLocationIds(
  tx: Tx,
  limit: number,
): Promise<{ line: number; first: number }[]> {
  const result = await tx.query<{ line: number; first: number }>(
    `SELECT line, first
       FROM (SELECT line, min(line) OVER (PARTITION BY location_id) AS first FROM location_stage) AS d
      WHERE line <> first
      ORDER BY line
      LIMIT $1::integer`,
    [limit],
  );
  return result.rows;
}

/** The ERP code sent a second time first, in line order. */
export async function selectFirstRepeatedStagedErpCode(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ erp_code: string }>(
    `SELECT erp_code
       FROM (SELECT erp_code, line, row_number() OVER (PARTITION BY erp_code ORDER BY line) AS n
               FROM location_stage WHERE erp_code IS NOT NULL) AS r
      WHERE n = 2
      ORDER BY line
      LIMIT 1`,
  );
  return result.rows[0]?.erp_code;
}

/** The first LocationGroup name, in line order, that names no stored group. */
export async function selectFirstUnknownStagedGroup(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ group_name: string }>(
    `SELECT s.group_name
       FROM location_stage s
      WHERE s.group_name IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM location_group g WHERE g.name = s.group_name)
      ORDER BY s.line
      LIMIT 1`,
  );
  return result.rows[0]?.group_name;
}

/**
 * Locks the staged ERP codes, so that a concurrent upsert giving one of them to another Location waits, and its own
 * check then sees this one's result. The codes are hashed into at most 1,024 locks taken in a fixed order: writers
 * cannot deadlock on them, and a body of 600,000 codes does not fill the lock table.
 */
export async function lockStagedErpCodes(tx: Tx): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(hashtext('inventory.location.erp_code'), b.bucket)
       FROM (SELECT DISTINCT hashtext(erp_code) & 1023 AS bucket
               FROM location_stage WHERE erp_code IS NOT NULL ORDER BY bucket) AS b`,
  );
}

/** The ERP code, first in line order, that a stored Location not in the body holds. */
export async function selectFirstStagedErpCodeHeldByOthers(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ erp_code: string }>(
    `SELECT s.erp_code
       FROM location_stage s
       JOIN location l ON l.erp_code = s.erp_code
      WHERE NOT EXISTS (SELECT 1 FROM location_stage t WHERE t.location_id = l.location_id)
      ORDER BY s.line
      LIMIT 1`,
  );
  return result.rows[0]?.erp_code;
}

/**
 * Inserts or updates the staged Locations by locationId, in one statement. ERP-code uniqueness is checked when the
 * statement ends rather than per row, so codes may move between Locations of the same request. `ol` rises only for
 * Locations that actually change (D4).
 */
export async function upsertStagedLocations(tx: Tx): Promise<void> {
  await tx.query('SET CONSTRAINTS location_erp_code_unique DEFERRED');
  await tx.query(
    `INSERT INTO location (location_id, erp_code, location_group_id, incoming_active, outgoing_active, plc_state,
                           description, no_max_transport_units)
     SELECT r.location_id, r.erp_code, g.id, r.incoming_active, r.outgoing_active, r.plc_state,
            r.description, r.no_max_transport_units
       FROM location_stage r
       LEFT JOIN location_group g ON g.name = r.group_name
      ORDER BY r.location_id
     ON CONFLICT (location_id) DO UPDATE
        SET erp_code = EXCLUDED.erp_code,
            location_group_id = EXCLUDED.location_group_id,
            incoming_active = EXCLUDED.incoming_active,
            outgoing_active = EXCLUDED.outgoing_active,
            plc_state = EXCLUDED.plc_state,
            description = EXCLUDED.description,
            no_max_transport_units = EXCLUDED.no_max_transport_units,
            ol = location.ol + 1,
            last_modified_dt = now()
      WHERE (location.erp_code, location.location_group_id, location.incoming_active, location.outgoing_active,
             location.plc_state, location.description, location.no_max_transport_units)
            IS DISTINCT FROM
            (EXCLUDED.erp_code, EXCLUDED.location_group_id, EXCLUDED.incoming_active, EXCLUDED.outgoing_active,
             EXCLUDED.plc_state, EXCLUDED.description, EXCLUDED.no_max_transport_units)`,
  );
  await tx.query('SET CONSTRAINTS location_erp_code_unique IMMEDIATE');
}
