import type { Queryable, Tx } from '../db/tx.js';

export const RESERVATION_STATES = ['ACTIVE', 'RELEASED', 'EXPIRED', 'ISSUED'] as const;
export type ReservationState = (typeof RESERVATION_STATES)[number];

/** A reservation as `reservation_life` keeps it, with its Product's SKU and base unit. */
export interface ReservationRow {
  /** The list's page cursor. */
  id: number;
  reservationId: string;
  productId: number;
  sku: string;
  productBaseCode: string;
  /** The Product's `ol`: its SKU and base unit are part of the reservation's representation (D33's tag). */
  productOl: number;
  qtyBase: string;
  state: ReservationState;
  externalRef: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  endedAt: Date | null;
}

/** What a reservation holds, or held when it ended, on one unit. */
export interface ReservationPart {
  id: number;
  reservationId: string;
  /** Null once the unit is gone (an issue emptied it). */
  packagingUnitId: number | null;
  pKey: string;
  qtyBase: string;
  picked: boolean;
}

const RESERVATION_COLUMNS = `r.id, r.reservation_id AS "reservationId", r.product_id AS "productId", p.sku,
       p.base_unit_code AS "productBaseCode", p.ol AS "productOl", r.qty_base::text AS "qtyBase", r.state, r.external_ref AS "externalRef",
       r.expires_at AS "expiresAt", r.created_at AS "createdAt", r.ended_at AS "endedAt"`;

const PART_COLUMNS = `id, reservation_id AS "reservationId", packaging_unit_id AS "packagingUnitId",
       packaging_unit_pkey AS "pKey", qty_base::text AS "qtyBase", picked`;

/**
 * Locks the reservation: every change of it (pick, issue, release, expiry) takes this lock first, so they
 * serialise per reservation and each sees the state the one before it left.
 */
export async function lockReservation(tx: Tx, reservationId: string): Promise<ReservationRow | undefined> {
  const result = await tx.query<ReservationRow>({
    name: 'lock-reservation',
    text: `SELECT ${RESERVATION_COLUMNS}
             FROM reservation_life r JOIN product p ON p.id = r.product_id
            WHERE r.reservation_id = $1::uuid FOR UPDATE OF r`,
    values: [reservationId],
  });
  return result.rows[0];
}

/** The next active reservation past its expiry that no other instance holds, locked (D32). */
export async function lockNextExpired(tx: Tx): Promise<ReservationRow | undefined> {
  const result = await tx.query<ReservationRow>({
    name: 'lock-next-expired-reservation',
    text: `SELECT ${RESERVATION_COLUMNS}
             FROM reservation_life r JOIN product p ON p.id = r.product_id
            WHERE r.id = (SELECT id FROM reservation_life
                           WHERE state = 'ACTIVE' AND expires_at <= now()
                           ORDER BY expires_at LIMIT 1 FOR UPDATE SKIP LOCKED)`,
  });
  return result.rows[0];
}

/** The parts the reservations hold now (ACTIVE) or held when they ended, by id; FOR UPDATE when `lock` is set. */
export async function selectParts(
  db: Queryable,
  reservationIds: readonly string[],
  lock = false,
): Promise<ReservationPart[]> {
  const result = await db.query<ReservationPart>(
    `SELECT ${PART_COLUMNS} FROM reservation WHERE reservation_id = ANY($1::uuid[]) ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
    [reservationIds],
  );
  return result.rows;
}

export async function selectReservation(db: Queryable, reservationId: string): Promise<ReservationRow | undefined> {
  const result = await db.query<ReservationRow>({
    name: 'select-reservation',
    text: `SELECT ${RESERVATION_COLUMNS}
             FROM reservation_life r JOIN product p ON p.id = r.product_id
            WHERE r.reservation_id = $1::uuid`,
    values: [reservationId],
  });
  return result.rows[0];
}

export interface ReservationFilter {
  readonly sku?: string;
  readonly externalRef?: string;
  readonly state?: ReservationState;
}

/** Newest first: `limit` reservations older than the cursor `after` (or the newest), matching every filter given. */
export async function selectReservations(
  db: Queryable,
  filter: ReservationFilter,
  page: { limit: number; after?: number },
): Promise<ReservationRow[]> {
  const result = await db.query<ReservationRow>(
    `SELECT ${RESERVATION_COLUMNS}
       FROM reservation_life r JOIN product p ON p.id = r.product_id
      WHERE ($1::text IS NULL OR p.sku = $1) AND ($2::text IS NULL OR r.external_ref = $2)
        AND ($3::text IS NULL OR r.state = $3) AND ($4::bigint IS NULL OR r.id < $4)
      ORDER BY r.id DESC LIMIT $5`,
    [filter.sku ?? null, filter.externalRef ?? null, filter.state ?? null, page.after ?? null, page.limit],
  );
  return result.rows;
}

/**
 * Ends a reservation: the new state, and its parts no longer active, so they no longer count in reserved_base
 * (which the caller lowers in the same transaction).
 */
export async function endReservation(tx: Tx, reservationId: string, state: ReservationState): Promise<void> {
  await tx.query({
    name: 'end-reservation',
    text: `WITH parts AS (UPDATE reservation SET released_at = now() WHERE reservation_id = $1::uuid AND released_at IS NULL)
           UPDATE reservation_life SET state = $2, ended_at = now() WHERE reservation_id = $1::uuid`,
    values: [reservationId, state],
  });
}

/** Lowers each unit's reserved amount by what the ending parts held on it. */
export async function lowerReserved(tx: Tx, parts: readonly { unitId: number; qtyBase: string }[]): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit pu SET reserved_base = pu.reserved_base - v.amount, ol = pu.ol + 1, last_modified_dt = now()
       FROM unnest($1::bigint[], $2::numeric[]) AS v(unit_id, amount)
      WHERE pu.id = v.unit_id`,
    [parts.map((part) => part.unitId), parts.map((part) => part.qtyBase)],
  );
}

/**
 * The parts after a pick of `amount` from `part` (D32): the goods moved whole (the part is now picked), or were
 * split off into the unit `arrived` (the part keeps the rest, or goes when nothing is left; a new picked part
 * holds the moved amount).
 */
export async function recordPick(
  tx: Tx,
  part: ReservationPart,
  amount: string,
  arrived: { id: number; pKey: string } | undefined,
  actor: { subject: string; requestId: string },
): Promise<void> {
  if (!arrived) {
    await tx.query('UPDATE reservation SET picked = true WHERE id = $1', [part.id]);
    return;
  }
  await tx.query({
    name: 'record-split-pick',
    text: `WITH source AS (UPDATE reservation SET qty_base = qty_base - $2::numeric WHERE id = $1 AND qty_base > $2::numeric),
                emptied AS (DELETE FROM reservation WHERE id = $1 AND qty_base = $2::numeric)
           INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, picked, actor,
                                    request_id)
           VALUES ($3::uuid, $4, $5::uuid, $2::numeric, true, $6, $7)`,
    values: [part.id, amount, part.reservationId, arrived.id, arrived.pKey, actor.subject, actor.requestId],
  });
}
