import { columnOf } from '../db/columns.js';
import type { Tx } from '../db/tx.js';
import { movementInsert, type Actor, type MovementEntry } from '../ledger/sql.js';

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

/** What one round of allocation locked: every candidate it looked at, and those still allocatable. */
export interface LockedCandidates {
  readonly candidateIds: number[];
  readonly allocatable: CandidateRow[];
}

/**
 * Reads the next candidates (D23) in FEFO-then-FIFO order without locks, locks them in id order, the order every
 * writer uses, and keeps those still allocatable, in one statement. The locking CTE reads one table only, so
 * after waiting for a lock PostgreSQL hands on the unit's newest version, and the outer query judges a unit
 * another request moved or reserved meanwhile as it is now. The LoadUnit, TransportUnit and Location are read
 * without locks: an allocation that read them before a concurrent change is simply ordered before it.
 */
export async function lockNextCandidates(
  tx: Tx,
  productId: number,
  groupIds: readonly number[] | null,
  seen: readonly number[],
  limit: number,
): Promise<LockedCandidates> {
  const result = await tx.query<CandidateRow & { allocatable: boolean }>({
    name: 'allocation-lock-candidates',
    text: `WITH candidate AS (
         SELECT pu.id
           FROM packaging_unit pu
           JOIN load_unit lu ON lu.id = pu.load_unit_id
           JOIN transport_unit tu ON tu.id = lu.transport_unit_id
           LEFT JOIN location loc ON loc.id = tu.actual_location_id
          WHERE pu.product_id = $1 AND ${ALLOCATABLE} AND NOT lu.locked
            AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[]))
            AND pu.id <> ALL($3::bigint[])
          ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, pu.id
          LIMIT $4
       ), locked AS MATERIALIZED (
         SELECT pu.id, pu.p_key, pu.product_id, pu.qty_code, pu.qty_base, pu.reserved_base, pu.load_unit_id,
                pu.state, pu.expires_at, pu.create_dt
           FROM packaging_unit pu
          WHERE pu.id = ANY(ARRAY(SELECT id FROM candidate))
          ORDER BY pu.id FOR UPDATE
       )
       SELECT c.id, pu.p_key AS "pKey", pu.product_id AS "productId", pu.qty_code AS "qtyCode",
              pu.qty_base::text AS "qtyBase", pu.reserved_base::text AS "reservedBase", lu.id AS "loadUnitId",
              lu.physical_position AS "loadUnitPosition", tu.bk AS "transportUnitBK", loc.erp_code AS "erpCode",
              COALESCE(${ALLOCATABLE} AND NOT lu.locked
                       AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[])), false) AS allocatable
         FROM candidate c
         LEFT JOIN locked pu ON pu.id = c.id
         LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
         LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
         LEFT JOIN location loc ON loc.id = tu.actual_location_id
        ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, c.id`,
    values: [productId, groupIds, seen, limit],
  });
  return {
    candidateIds: result.rows.map((row) => row.id),
    allocatable: result.rows.filter((row) => row.allocatable),
  };
}

/**
 * Reserves on each unit and records the reservation and its ledger rows, in one statement: the CHECK
 * reserved_base <= qty_base refuses any over-reservation outright.
 */
export async function addReservations(
  tx: Tx,
  reservationId: string,
  takes: readonly { unitId: number; qtyBase: string }[],
  movements: readonly MovementEntry[],
  actor: Actor,
): Promise<void> {
  const ledger = movementInsert(movements, actor, 4);
  await tx.query({
    name: 'allocation-reserve',
    text: `WITH take AS (SELECT * FROM unnest($1::bigint[], $2::numeric[]) AS v(id, amount)),
       reserved AS (
         UPDATE packaging_unit pu
            SET reserved_base = pu.reserved_base + take.amount, ol = pu.ol + 1, last_modified_dt = now()
           FROM take WHERE pu.id = take.id
       ), recorded AS (
         INSERT INTO reservation (reservation_id, packaging_unit_id, qty_base, actor, request_id)
         SELECT $3::uuid, take.id, take.amount, ${ledger.actorParameters.subject}, ${ledger.actorParameters.requestId}
           FROM take
       )
       ${ledger.text}`,
    values: [columnOf(takes, 'unitId'), columnOf(takes, 'qtyBase'), reservationId, ...ledger.values],
  });
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
