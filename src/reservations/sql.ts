import type { Queryable, Tx } from '../db/tx.js';
import type { AlsoWritten } from '../ledger/sql.js';

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

/**
 * D40: an ACTIVE reservation of `reservation_life` row `r` whose expiry has passed. It is EXPIRED from that moment
 * for every reader and writer, whether or not the expiry work has ended it yet (it then ends it as of its expiry).
 */
export const isDue = (r: string): string => `(${r}.state = 'ACTIVE' AND ${r}.expires_at <= now())`;

/** The state a client sees: a due reservation is EXPIRED already. */
const effectiveState = (r: string): string => `CASE WHEN ${isDue(r)} THEN 'EXPIRED' ELSE ${r}.state END`;

/**
 * The ids of the reservations of the Product `product` (a SQL expression of its id) past their expiry and not yet
 * ended (D40: `isDue`), in reservation_life_product_active_idx (migration 0018) whatever the statistics say
 * (test/reservations/due-of-products-plans.test.ts). As a plain condition on `expires_at` the planner could take
 * the expiry index and read the due reservations of every Product (a mass expiry's, for every write, allocation or
 * reading of another Product), or scan every active one. So the expiry is compared together with the Product
 * (`(product_id, expires_at) <= (product, now())`, for the Product's rows the same as `expires_at <= now()`): a row
 * comparison only an index led by both columns serves, and which does not imply the expiry index's condition. In
 * that index's order, so that asking for the first one (`LIMIT 1`) never reads the table: as `EXISTS` with statistics
 * that put many due reservations on every Product (another Product's mass expiry), the planner scanned all of them.
 */
export const dueOfProduct = (product: string): string => `SELECT id FROM reservation_life
      WHERE product_id = ${product} AND state = 'ACTIVE' AND (product_id, expires_at) <= (${product}, now())
      ORDER BY expires_at`;

/**
 * What reservations of one Product past their expiry but not yet ended still hold, per unit (`unit_id`,
 * `product_id`, `qty_base`): stock readings count it free (D40). `product` is a SQL expression of the Product's id.
 * The reservations are found by dueOfProduct, then each one's active parts by its id.
 */
export const dueHoldingsOf = (product: string): string => `SELECT part.packaging_unit_id AS unit_id, r.product_id,
          sum(part.qty_base) AS qty_base
     FROM reservation_life r
    CROSS JOIN LATERAL (SELECT packaging_unit_id, qty_base FROM reservation
                         WHERE reservation_id = r.reservation_id AND released_at IS NULL OFFSET 0) part
   WHERE r.id = ANY(ARRAY(${dueOfProduct(product)}))
    GROUP BY part.packaging_unit_id, r.product_id`;

/**
 * What reservations past their expiry but not yet ended hold on the unit `pu` (a packaging_unit row), 0 if none:
 * every reading of the unit counts it free (D40). Found by reservation_active_unit_idx: one probe for a unit
 * nothing reserves, then each active part's reservation by its id. Asked per part in a subquery of its own, not
 * joined: a join let the planner start from the due reservations instead, which statistics taken while none was
 * due put at one row, and then each unit read walked every due reservation (50,000 per unit in a mass expiry).
 */
export const dueOnUnit = (pu: string): string => `COALESCE((SELECT sum(part.qty_base)
      FROM reservation part
     WHERE part.packaging_unit_id = ${pu}.id AND part.released_at IS NULL
       AND (SELECT ${isDue('r')} FROM reservation_life r WHERE r.reservation_id = part.reservation_id)), 0)`;

const RESERVATION_COLUMNS = `r.id, r.reservation_id AS "reservationId", r.product_id AS "productId", p.sku,
       p.base_unit_code AS "productBaseCode", p.ol AS "productOl", r.qty_base::text AS "qtyBase",
       ${effectiveState('r')} AS state, r.external_ref AS "externalRef", r.expires_at AS "expiresAt",
       r.created_at AS "createdAt", COALESCE(r.ended_at, CASE WHEN ${isDue('r')} THEN r.expires_at END) AS "endedAt"`;

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

/**
 * lockReservation, then the parts of the reservation in id order, then (when `unitPKey` is given) the unit the
 * reservation holds by that key, in one statement: each lock waits for the one before it (the parts' read needs the
 * locked reservation, the unit's the whole of the locked parts), the order every change of a reservation keeps.
 */
export async function lockReservationAndParts(
  tx: Tx,
  reservationId: string,
  unitPKey: string | null = null,
): Promise<{ reservation: ReservationRow; parts: ReservationPart[] } | undefined> {
  const result = await tx.query<ReservationRow & { parts: ReservationPart[] }>({
    name: 'lock-reservation-and-parts',
    text: `WITH locked AS MATERIALIZED (
             SELECT ${RESERVATION_COLUMNS}
               FROM reservation_life r JOIN product p ON p.id = r.product_id
              WHERE r.reservation_id = $1::uuid FOR UPDATE OF r
           ), parts AS MATERIALIZED (
             SELECT ${PART_COLUMNS} FROM reservation
              WHERE reservation_id = (SELECT "reservationId" FROM locked) ORDER BY id FOR UPDATE
           ), unit AS MATERIALIZED (
             SELECT id FROM packaging_unit
              WHERE id = (SELECT max("packagingUnitId") FILTER (WHERE "pKey" = $2::uuid) FROM parts) FOR UPDATE
           )
           SELECT locked.*, (SELECT COALESCE(json_agg(parts ORDER BY id), '[]') FROM parts) AS parts
             FROM locked CROSS JOIN (SELECT count(*) FROM unit) AS unit_locked`,
    values: [reservationId, unitPKey],
  });
  const row = result.rows[0];
  if (!row) return undefined;
  const { parts, ...reservation } = row;
  return { reservation, parts };
}

/**
 * Up to `limit` reservations past their expiry that no other transaction holds (SKIP LOCKED), locked, oldest
 * expiry first (D32, D40): instances share the work and none waits for another. The expiry index is walked in its
 * order and left after `limit` rows, so a batch costs the same however many are due; answered in id order.
 *
 * Whatever the statistics say: taken while none or few were due, they made the planner read every due reservation
 * in each batch (a bitmap scan and a sort of them all, or the join with the Products first), which made a mass
 * expiry quadratic. So the limit is taken on reservation_life alone, the Products joined after, and the statement is
 * planned with sorts and bitmap scans off (as numbering does, D39): only the ordered walk remains. The settings are
 * put back for the rest of the transaction.
 */
export async function lockDueReservations(tx: Tx, limit: number): Promise<ReservationRow[]> {
  const { rows } = await tx.query<{ sort: string; bitmap: string }>(
    `SELECT current_setting('enable_sort') AS sort, current_setting('enable_bitmapscan') AS bitmap,
            set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`,
  );
  const result = await tx.query<ReservationRow>({
    name: 'lock-due-reservations',
    text: `WITH due AS MATERIALIZED (
             SELECT * FROM reservation_life r WHERE ${isDue('r')}
              ORDER BY r.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
           )
           SELECT ${RESERVATION_COLUMNS} FROM due r JOIN product p ON p.id = r.product_id`,
    values: [limit],
  });
  await tx.query(`SELECT set_config('enable_sort', $1, true), set_config('enable_bitmapscan', $2, true)`, [
    rows[0]!.sort,
    rows[0]!.bitmap,
  ]);
  return result.rows.sort((a, b) => a.id - b.id);
}

/**
 * All reservations of the Products past their expiry, locked in id order (across Products too), waiting for those
 * another transaction holds; one a concurrent expiry ended meanwhile is left out, judged on the version locked.
 *
 * Found Product by Product (dueOfProduct), then locked by id alone, the condition applied to what it locked.
 */
export async function lockDueReservationsOfProducts(tx: Tx, skus: readonly string[]): Promise<ReservationRow[]> {
  const result = await tx.query<ReservationRow>({
    name: 'lock-due-reservations-of-products',
    text: `WITH due AS MATERIALIZED (
             SELECT id, state, expires_at FROM reservation_life
              WHERE id = ANY(ARRAY(
                      SELECT d.id FROM product p
                       CROSS JOIN LATERAL (${dueOfProduct('p.id')} OFFSET 0) d
                       WHERE p.sku = ANY($1::text[])))
              ORDER BY id FOR UPDATE
           )
           SELECT ${RESERVATION_COLUMNS}
             FROM reservation_life r JOIN product p ON p.id = r.product_id
            WHERE r.id IN (SELECT id FROM due WHERE ${isDue('due')})
            ORDER BY r.id`,
    values: [skus],
  });
  return result.rows;
}

/**
 * The parts the reservations hold now (ACTIVE) or held when they ended, by id; FOR UPDATE when `lock` is set.
 * Found reservation by reservation (the subquery with OFFSET 0 is not joined), then read by their ids: as
 * `reservation_id = ANY(…)` of an expiry batch's 1,000, statistics taken while the table was empty (each id matching
 * 1/200 of it, they say) made the planner read the whole table in every batch.
 */
export async function selectParts(
  db: Queryable,
  reservationIds: readonly string[],
  lock = false,
): Promise<ReservationPart[]> {
  const result = await db.query<ReservationPart>(
    `SELECT ${PART_COLUMNS} FROM reservation
      WHERE id = ANY(ARRAY(SELECT part.id FROM unnest($1::uuid[]) AS k(reservation_id)
                             CROSS JOIN LATERAL (SELECT id FROM reservation
                                                  WHERE reservation_id = k.reservation_id OFFSET 0) part))
      ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
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
        AND ($3::text IS NULL OR ${effectiveState('r')} = $3) AND ($4::bigint IS NULL OR r.id < $4)
      ORDER BY r.id DESC LIMIT $5`,
    [filter.sku ?? null, filter.externalRef ?? null, filter.state ?? null, page.after ?? null, page.limit],
  );
  return result.rows;
}

/**
 * Ends reservations: the new state, and their parts no longer active, so they no longer count in reserved_base
 * (which the caller lowers in the same transaction). An expired one ended at its expiry (D40), whenever this runs.
 * By internal ids, which the caller has from its locking reads.
 */
export async function endReservations(
  tx: Tx,
  ids: readonly number[],
  partIds: readonly number[],
  state: ReservationState,
): Promise<void> {
  await tx.query({
    name: 'end-reservations',
    text: `WITH parts AS (UPDATE reservation SET released_at = now() WHERE id = ANY($2::bigint[]))
           UPDATE reservation_life SET state = $3, ended_at = CASE WHEN $3 = 'EXPIRED' THEN expires_at ELSE now() END
            WHERE id = ANY($1::bigint[])`,
    values: [ids, partIds, state],
  });
}

/** Lowers each unit's reserved amount by what the ending parts held on it: one change, one version step. */
export async function lowerReserved(tx: Tx, parts: readonly { unitId: number; qtyBase: string }[]): Promise<void> {
  await tx.query(
    `UPDATE packaging_unit pu
        SET reserved_base = pu.reserved_base - v.amount, ol = pu.ol + 1, last_modified_dt = now()
       FROM unnest($1::bigint[], $2::numeric[]) AS v(unit_id, amount)
      WHERE pu.id = v.unit_id`,
    [parts.map((part) => part.unitId), parts.map((part) => part.qtyBase)],
  );
}

/**
 * The parts after a pick of `amount` from `part` (D32): the goods moved whole (the part is now picked), or were
 * split off into the unit `arrived` (the part keeps the rest, or goes when nothing is left; a new picked part
 * holds the moved amount). Written by the statement that records the pick's ledger rows and events.
 */
export function pickedParts(
  part: ReservationPart,
  amount: string,
  arrived: { id: number; pKey: string } | undefined,
  actor: { subject: string; requestId: string },
): AlsoWritten {
  if (!arrived) {
    return {
      name: 'append-whole-pick',
      ctes: (first) => ({
        text: `picked AS (UPDATE reservation SET picked = true WHERE id = $${first})`,
        values: [part.id],
      }),
    };
  }
  return {
    name: 'append-split-pick',
    ctes: (first) => {
      const p = (n: number): string => `$${first + n - 1}`;
      return {
        text: `source AS (UPDATE reservation SET qty_base = qty_base - ${p(2)}::numeric
                           WHERE id = ${p(1)}::bigint AND qty_base > ${p(2)}::numeric),
               emptied AS (DELETE FROM reservation WHERE id = ${p(1)}::bigint AND qty_base = ${p(2)}::numeric),
               picked AS (INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, picked,
                                                   actor, request_id)
                          VALUES (${p(3)}::uuid, ${p(4)}::bigint, ${p(5)}::uuid, ${p(2)}::numeric, true, ${p(6)}::text,
                                  ${p(7)}::text))`,
        values: [part.id, amount, part.reservationId, arrived.id, arrived.pKey, actor.subject, actor.requestId],
      };
    },
  };
}
