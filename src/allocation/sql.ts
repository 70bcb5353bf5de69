import type { Queryable, Tx } from '../db/tx.js';

/** A unit allocation may take from, with what the result names it by. */
export interface CandidateRow {
  id: number;
  pKey: string;
  productId: number;
  qtyCode: string;
  qtyBase: string;
  reservedBase: string;
  loadUnitId: number;
  loadUnitPosition: string;
  transportUnitBK: string;
  erpCode: string | null;
}

const ALLOCATABLE = `pu.load_unit_id IS NOT NULL AND pu.state = 'AVAILABLE' AND pu.qty_base > pu.reserved_base`;

/** The next candidates (D23) in FEFO-then-FIFO order, read without locks: locking follows, in id order. */
export async function selectCandidateIds(
  db: Queryable,
  productId: number,
  groupIds: readonly number[] | null,
  seen: readonly number[],
  limit: number,
): Promise<number[]> {
  const result = await db.query<{ id: number }>({
    name: 'allocation-candidates',
    text: `SELECT pu.id
       FROM packaging_unit pu
       JOIN load_unit lu ON lu.id = pu.load_unit_id
       JOIN transport_unit tu ON tu.id = lu.transport_unit_id
       LEFT JOIN location loc ON loc.id = tu.actual_location_id
      WHERE pu.product_id = $1 AND ${ALLOCATABLE} AND NOT lu.locked
        AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[]))
        AND pu.id <> ALL($3::bigint[])
      ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, pu.id
      LIMIT $4`,
    values: [productId, groupIds, seen, limit],
  });
  return result.rows.map((row) => row.id);
}

/**
 * Locks the units in id order, the order every writer uses, and keeps those still allocatable. The statement
 * reads one table only, so after waiting for a lock PostgreSQL re-checks the unit's newest version (a unit
 * another request moved or reserved meanwhile is judged as it is now). The LoadUnit, TransportUnit and
 * Location are then read as they are now, without locks: an allocation that read them before a concurrent
 * change is simply ordered before it.
 */
export async function lockCandidates(
  tx: Tx,
  ids: readonly number[],
  groupIds: readonly number[] | null,
): Promise<CandidateRow[]> {
  await tx.query({
    name: 'allocation-lock',
    text: 'SELECT pu.id FROM packaging_unit pu WHERE pu.id = ANY($1::bigint[]) ORDER BY pu.id FOR UPDATE',
    values: [ids],
  });
  const result = await tx.query<CandidateRow>({
    name: 'allocation-read-locked',
    text: `SELECT pu.id, pu.p_key AS "pKey", pu.product_id AS "productId", pu.qty_code AS "qtyCode",
            pu.qty_base::text AS "qtyBase", pu.reserved_base::text AS "reservedBase", lu.id AS "loadUnitId",
            lu.physical_position AS "loadUnitPosition", tu.bk AS "transportUnitBK", loc.erp_code AS "erpCode"
       FROM packaging_unit pu
       JOIN load_unit lu ON lu.id = pu.load_unit_id
       JOIN transport_unit tu ON tu.id = lu.transport_unit_id
       LEFT JOIN location loc ON loc.id = tu.actual_location_id
      WHERE pu.id = ANY($1::bigint[]) AND ${ALLOCATABLE} AND NOT lu.locked
        AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[]))
      ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, pu.id`,
    values: [ids, groupIds],
  });
  return result.rows;
}

/** Reserves on each unit; the CHECK reserved_base <= qty_base refuses any over-reservation outright. */
export async function addReservations(
  tx: Tx,
  reservationId: string,
  takes: readonly { unitId: number; qtyBase: string }[],
  actor: { subject: string; requestId: string },
): Promise<void> {
  const unitIds = takes.map((take) => take.unitId);
  const amounts = takes.map((take) => take.qtyBase);
  await tx.query(
    `UPDATE packaging_unit pu SET reserved_base = pu.reserved_base + v.amount, ol = pu.ol + 1, last_modified_dt = now()
       FROM unnest($1::bigint[], $2::numeric[]) AS v(id, amount) WHERE pu.id = v.id`,
    [unitIds, amounts],
  );
  await tx.query(
    `INSERT INTO reservation (reservation_id, packaging_unit_id, qty_base, actor, request_id)
     SELECT $1::uuid, v.id, v.amount, $4, $5 FROM unnest($2::bigint[], $3::numeric[]) AS v(id, amount)`,
    [reservationId, unitIds, amounts, actor.subject, actor.requestId],
  );
}

export interface ReservationRow {
  id: number;
  packagingUnitId: number | null;
  qtyBase: string;
  releasedAt: Date | null;
}

export async function lockReservation(tx: Tx, reservationId: string): Promise<ReservationRow[]> {
  const result = await tx.query<ReservationRow>(
    `SELECT id, packaging_unit_id AS "packagingUnitId", qty_base::text AS "qtyBase", released_at AS "releasedAt"
       FROM reservation WHERE reservation_id = $1::uuid ORDER BY id FOR UPDATE`,
    [reservationId],
  );
  return result.rows;
}

export async function releaseReservationRows(tx: Tx, rows: readonly ReservationRow[]): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit pu SET reserved_base = pu.reserved_base - v.amount, ol = pu.ol + 1, last_modified_dt = now()
       FROM (SELECT unit_id, sum(amount) AS amount FROM unnest($1::bigint[], $2::numeric[]) AS r(unit_id, amount)
              GROUP BY unit_id) AS v
      WHERE pu.id = v.unit_id`,
    [rows.map((row) => row.packagingUnitId), rows.map((row) => row.qtyBase)],
  );
  await tx.query('UPDATE reservation SET released_at = now() WHERE id = ANY($1::bigint[])', [
    rows.map((row) => row.id),
  ]);
}
