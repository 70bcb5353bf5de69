import type { Queryable } from '../db/tx.js';

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
