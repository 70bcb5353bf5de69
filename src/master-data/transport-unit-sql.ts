import type { Queryable, Tx } from '../db/tx.js';

export interface TransportUnitRow {
  readonly id: number;
  readonly pKey: string;
  readonly bk: string;
  /** Null while the unit is only registered on the spot (D15). */
  readonly transportUnitType: string | null;
  readonly actualLocationId: number | null;
  readonly ol: number;
  readonly createDt: Date;
}

// bigint columns arrive as strings unless a type parser is installed; Number() reads both.
type Id = string | number;

interface RawTransportUnit {
  id: Id;
  p_key: string;
  bk: string;
  transport_unit_type: string | null;
  actual_location_id: Id | null;
  ol: number;
  create_dt: Date;
}

function toTransportUnit(raw: RawTransportUnit): TransportUnitRow {
  return {
    id: Number(raw.id),
    pKey: raw.p_key,
    bk: raw.bk,
    transportUnitType: raw.transport_unit_type,
    actualLocationId: raw.actual_location_id === null ? null : Number(raw.actual_location_id),
    ol: raw.ol,
    createDt: raw.create_dt,
  };
}

const COLUMNS = 'id, p_key, bk, transport_unit_type, actual_location_id, ol, create_dt';

export async function selectTransportUnitByBk(db: Queryable, bk: string): Promise<TransportUnitRow | undefined> {
  const result = await db.query<RawTransportUnit>(`SELECT ${COLUMNS} FROM transport_unit WHERE bk = $1::text`, [bk]);
  const raw = result.rows[0];
  return raw && toTransportUnit(raw);
}

/** Inserts a bare TransportUnit unless one with that key exists; answers the row only when it inserted it. */
export async function insertTransportUnitIfMissing(tx: Tx, bk: string): Promise<TransportUnitRow | undefined> {
  const result = await tx.query<RawTransportUnit>(
    `INSERT INTO transport_unit (bk) VALUES ($1::text)
     ON CONFLICT (bk) DO NOTHING
     RETURNING ${COLUMNS}`,
    [bk],
  );
  const raw = result.rows[0];
  return raw && toTransportUnit(raw);
}

/**
 * Creates the TransportUnit, or completes one that was only registered on the spot (no type yet), in one
 * statement so that concurrent creates of the same key cannot both succeed. Answers undefined when a complete
 * TransportUnit with that key already exists.
 */
export async function insertOrCompleteTransportUnit(
  tx: Tx,
  bk: string,
  transportUnitType: string,
  locationId: number,
): Promise<TransportUnitRow | undefined> {
  const result = await tx.query<RawTransportUnit>(
    `INSERT INTO transport_unit (bk, transport_unit_type, actual_location_id)
     VALUES ($1::text, $2::text, $3::bigint)
     ON CONFLICT (bk) DO UPDATE
        SET transport_unit_type = EXCLUDED.transport_unit_type,
            actual_location_id = EXCLUDED.actual_location_id,
            ol = transport_unit.ol + 1,
            last_modified_dt = now()
      WHERE transport_unit.transport_unit_type IS NULL
     RETURNING ${COLUMNS}`,
    [bk, transportUnitType, locationId],
  );
  const raw = result.rows[0];
  return raw && toTransportUnit(raw);
}

/** Puts the TransportUnit on the Location; `ol` rises only when it actually moves (D4). */
export async function updateTransportUnitLocation(tx: Tx, id: number, locationId: number): Promise<void> {
  await tx.query(
    `UPDATE transport_unit
        SET actual_location_id = $2::bigint, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1::bigint AND actual_location_id IS DISTINCT FROM $2::bigint`,
    [id, locationId],
  );
}
