import { columnOf } from '../db/columns.js';
import type { Queryable, Tx } from '../db/tx.js';

export interface LocationRow {
  readonly id: number;
  readonly pKey: string;
  readonly locationId: string;
  readonly erpCode: string | null;
  readonly locationGroupId: number | null;
  readonly locationGroupName: string | null;
  readonly incomingActive: boolean;
  readonly outgoingActive: boolean;
  readonly plcState: number;
  readonly description: string | null;
  readonly noMaxTransportUnits: number | null;
  readonly ol: number;
  readonly createDt: Date;
}

/** One Location of a bulk upsert, defaults already applied. */
export interface LocationValues {
  readonly locationId: string;
  readonly erpCode: string | null;
  readonly locationGroupName: string | null;
  readonly incomingActive: boolean;
  readonly outgoingActive: boolean;
  readonly plcState: number;
  readonly description: string | null;
  readonly noMaxTransportUnits: number | null;
}

// bigint columns arrive as strings unless a type parser is installed; Number() reads both.
type Id = string | number;

interface RawLocation {
  id: Id;
  p_key: string;
  location_id: string;
  erp_code: string | null;
  location_group_id: Id | null;
  location_group_name: string | null;
  incoming_active: boolean;
  outgoing_active: boolean;
  plc_state: number;
  description: string | null;
  no_max_transport_units: number | null;
  ol: number;
  create_dt: Date;
}

function toLocation(raw: RawLocation): LocationRow {
  return {
    id: Number(raw.id),
    pKey: raw.p_key,
    locationId: raw.location_id,
    erpCode: raw.erp_code,
    locationGroupId: raw.location_group_id === null ? null : Number(raw.location_group_id),
    locationGroupName: raw.location_group_name,
    incomingActive: raw.incoming_active,
    outgoingActive: raw.outgoing_active,
    plcState: raw.plc_state,
    description: raw.description,
    noMaxTransportUnits: raw.no_max_transport_units,
    ol: raw.ol,
    createDt: raw.create_dt,
  };
}

const SELECT_LOCATION = `
  SELECT l.id, l.p_key, l.location_id, l.erp_code, l.location_group_id, g.name AS location_group_name,
         l.incoming_active, l.outgoing_active, l.plc_state, l.description, l.no_max_transport_units, l.ol, l.create_dt
    FROM location l
    LEFT JOIN location_group g ON g.id = l.location_group_id`;

/**
 * Takes a transaction lock per ERP code (in a fixed order, so writers cannot deadlock on them): a concurrent
 * upsert that gives the same code to another Location waits, and its own check then sees this one's result.
 */
export async function lockErpCodes(tx: Tx, erpCodes: readonly string[]): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(hashtext('inventory.location.erp_code'), hashtext(c.code))
       FROM (SELECT DISTINCT code FROM unnest($1::text[]) AS r(code) ORDER BY code) AS c`,
    [erpCodes],
  );
}

/** ERP codes among `erpCodes` that stored Locations other than `locationIds` hold. */
export async function selectErpCodesHeldByOthers(
  db: Queryable,
  erpCodes: readonly string[],
  locationIds: readonly string[],
): Promise<string[]> {
  const result = await db.query<{ erp_code: string }>(
    `SELECT erp_code FROM location
      WHERE erp_code = ANY($1::text[]) AND location_id <> ALL($2::text[])`,
    [erpCodes, locationIds],
  );
  return result.rows.map((row) => row.erp_code);
}

/**
 * Inserts or updates Locations by locationId, in one statement. ERP-code uniqueness is checked when the
 * statement ends rather than per row, so codes may move between Locations of the same request. `ol` rises
 * only for Locations that actually change (D4).
 */
export async function upsertLocations(tx: Tx, locations: readonly LocationValues[]): Promise<void> {
  await tx.query('SET CONSTRAINTS location_erp_code_unique DEFERRED');
  await tx.query(
    `INSERT INTO location (location_id, erp_code, location_group_id, incoming_active, outgoing_active, plc_state,
                           description, no_max_transport_units)
     SELECT r.location_id, r.erp_code, g.id, r.incoming_active, r.outgoing_active, r.plc_state,
            r.description, r.no_max_transport_units
       FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::boolean[], $6::integer[], $7::text[],
                   $8::integer[])
            AS r(location_id, erp_code, group_name, incoming_active, outgoing_active, plc_state, description,
                 no_max_transport_units)
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
    [
      columnOf(locations, 'locationId'),
      columnOf(locations, 'erpCode'),
      columnOf(locations, 'locationGroupName'),
      columnOf(locations, 'incomingActive'),
      columnOf(locations, 'outgoingActive'),
      columnOf(locations, 'plcState'),
      columnOf(locations, 'description'),
      columnOf(locations, 'noMaxTransportUnits'),
    ],
  );
  await tx.query('SET CONSTRAINTS location_erp_code_unique IMMEDIATE');
}

export async function selectLocationByLocationId(db: Queryable, locationId: string): Promise<LocationRow | undefined> {
  const result = await db.query<RawLocation>(`${SELECT_LOCATION} WHERE l.location_id = $1::text`, [locationId]);
  const raw = result.rows[0];
  return raw && toLocation(raw);
}

export async function selectLocationByErpCode(db: Queryable, erpCode: string): Promise<LocationRow | undefined> {
  const result = await db.query<RawLocation>(`${SELECT_LOCATION} WHERE l.erp_code = $1::text`, [erpCode]);
  const raw = result.rows[0];
  return raw && toLocation(raw);
}

export async function selectLocationsByIds(db: Queryable, ids: readonly number[]): Promise<LocationRow[]> {
  const result = await db.query<RawLocation>(`${SELECT_LOCATION} WHERE l.id = ANY($1::bigint[])`, [ids]);
  return result.rows.map(toLocation);
}
