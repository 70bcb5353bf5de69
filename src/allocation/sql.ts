import { columnOf } from '../db/columns.js';
import type { Tx } from '../db/tx.js';
import { eventInsert, signalEventsAfterCommit, type NewEvent } from '../events/outbox.js';
import { movementInsert, type Actor, type MovementEntry } from '../ledger/sql.js';
import { UNIT_COLUMNS_NOTHING_DUE, type PackagingUnitRow } from '../packaging-units/sql.js';
import { dueOfProduct } from '../reservations/sql.js';

/** The Product an allocation names, as its locking read finds it by SKU. */
export interface AllocatedProduct {
  readonly sku: string;
  readonly baseUnitCode: string;
}

/**
 * D23's candidate, in the SQL functions of migration 0010 that stock levels (D31) use too, so that `available`
 * and allocation can never disagree: the unit, its LoadUnit and its Product each allocatable, something left free.
 */
const ALLOCATABLE = `allocatable_unit(pu.state, pu.load_unit_id) AND allocatable_load_unit(lu.locked)
  AND pu.qty_base > pu.reserved_base`;

/** A unit allocation may take from, as PackagingUnitRow reads it, with the Location its LoadUnit is on. */
export type CandidateUnit = PackagingUnitRow & {
  loadUnitId: number;
  loadUnitPosition: string;
  transportUnitBK: string;
  erpCode: string | null;
};

/**
 * What one round of allocation found: the Product (undefined for an unknown SKU), every candidate it looked at,
 * and those still allocatable, each as it is now: locked, so it stays so until commit. `due`: the round was asked
 * to look for reservations of the Product past their expiry, found some, and so locked no unit.
 */
export interface LockedCandidates {
  readonly product: AllocatedProduct | undefined;
  readonly due: boolean;
  readonly candidateIds: number[];
  readonly allocatable: CandidateUnit[];
}

/** One round of allocation's locking read: what it looks for and how much it still needs. */
export interface CandidateRound {
  readonly sku: string;
  readonly groupIds: readonly number[] | null;
  /** Candidates earlier rounds looked at, not to be looked at again. */
  readonly seen: readonly number[];
  /** What is still wanted, in the kind's smallest unit: candidates are read until their free amounts cover it. */
  readonly remaining: string;
  /** The most candidates one round locks. */
  readonly limit: number;
  /** Lock no unit when a reservation of the Product is due (D40): the caller ends those first, then asks again. */
  readonly unlessDue: boolean;
}

/**
 * Finds the Product by SKU, reads its next candidates (D23) in FEFO-then-FIFO order without locks, as many as
 * their free amounts need to cover `remaining` (at most `limit`), locks them in id order, the order every writer
 * uses, and keeps those still allocatable, in one statement; a Product that is not AVAILABLE has none. With
 * `unlessDue` it first looks for reservations of the Product past their expiry, and when there is one it locks no
 * unit: D40's expiry locks reservations, which come before units in every lock order, so it must run first; the
 * look costs nothing in the usual case, where there is none, and saves that case a round trip.
 * The locking CTE reads one table only, so after waiting for a lock PostgreSQL hands on the unit's newest version,
 * and the outer query judges a unit another request moved or reserved meanwhile as it is now (the caller then asks
 * again for what is still missing). The LoadUnit, TransportUnit and Location are read without locks: an
 * allocation that read them before a concurrent change is simply ordered before it. Each candidate comes with every
 * column of PackagingUnitRow, so that its event is rendered without reading it again.
 */
export async function lockNextCandidates(tx: Tx, round: CandidateRound): Promise<LockedCandidates> {
  const result = await tx.query<
    CandidateUnit & { product: AllocatedProduct; due: boolean; candidateId: number | null; allocatable: boolean }
  >({
    name: 'allocation-lock-candidates',
    // RECURSIVE lets the locking CTE come first, before those it reads (none is recursive): pg_stat_activity shows
    // a statement's first 1024 characters, and those show what a waiting allocation waits for.
    text: `WITH RECURSIVE locked AS MATERIALIZED (
         SELECT pu.* FROM packaging_unit pu WHERE pu.id = ANY(ARRAY(SELECT id FROM candidate)) ORDER BY pu.id FOR UPDATE
       ), p AS (
         SELECT *, $6::boolean AND (${dueOfProduct('product.id')} LIMIT 1) IS NOT NULL AS due
           FROM product WHERE sku = $1
       ), ordered AS (
         SELECT pu.id, pu.expires_at, pu.create_dt, pu.qty_base - pu.reserved_base AS free
           FROM packaging_unit pu
           JOIN load_unit lu ON lu.id = pu.load_unit_id
           JOIN transport_unit tu ON tu.id = lu.transport_unit_id
           LEFT JOIN location loc ON loc.id = tu.actual_location_id
          WHERE pu.product_id = (SELECT id FROM p WHERE allocatable_product(availability_state) AND NOT due)
            AND ${ALLOCATABLE}
            AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[]))
            AND pu.id <> ALL($3::bigint[])
          ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, pu.id
          LIMIT $4
       ), candidate AS (
         SELECT id FROM (
           SELECT id, sum(free) OVER (ORDER BY expires_at ASC NULLS LAST, create_dt, id) - free AS before FROM ordered
         ) c WHERE before < $5::numeric
       )
       SELECT json_build_object('sku', p.sku, 'baseUnitCode', p.base_unit_code) AS product,
              p.due,
              c.id AS "candidateId", ${UNIT_COLUMNS_NOTHING_DUE}, loc.erp_code AS "erpCode",
              COALESCE(${ALLOCATABLE}
                       AND ($2::bigint[] IS NULL OR loc.location_group_id = ANY($2::bigint[])), false) AS allocatable
         FROM p
         LEFT JOIN candidate c ON true
         LEFT JOIN locked pu ON pu.id = c.id
         LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
         LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
         LEFT JOIN location loc ON loc.id = tu.actual_location_id
        ORDER BY pu.expires_at ASC NULLS LAST, pu.create_dt, c.id`,
    values: [round.sku, round.groupIds, round.seen, round.limit, round.remaining, round.unlessDue],
  });
  const candidates = result.rows.filter((row) => row.candidateId !== null);
  return {
    product: result.rows[0]?.product,
    due: result.rows[0]?.due ?? false,
    candidateIds: candidates.map((row) => row.candidateId!),
    allocatable: candidates
      .filter((row) => row.allocatable)
      .map(({ product, due, candidateId, allocatable, ...unit }) => unit),
  };
}

/** The reservation an allocation makes (D32): what it is for and when it ends by itself. */
export interface NewReservation {
  readonly reservationId: string;
  readonly productId: number;
  /** The whole reserved amount in the kind's smallest unit. */
  readonly qtyBase: string;
  readonly externalRef: string | null;
  readonly expiresAt: string | null;
}

/**
 * Reserves on each unit and records the reservation with its parts, its ledger rows and its events, in one
 * statement: the CHECK reserved_base <= qty_base refuses any over-reservation outright, and nothing is written
 * without the rest.
 */
export async function addReservations(
  tx: Tx,
  reservation: NewReservation,
  takes: readonly { unitId: number; pKey: string; qtyBase: string }[],
  movements: readonly MovementEntry[],
  events: readonly NewEvent[],
  actor: Actor,
): Promise<void> {
  const ledger = movementInsert(movements, actor, 9);
  const outbox = eventInsert(events, actor.requestId, 9 + ledger.values.length);
  await tx.query({
    name: 'allocation-reserve',
    text: `WITH take AS (SELECT * FROM unnest($1::bigint[], $2::numeric[], $4::uuid[]) AS v(id, amount, p_key)),
       reserved AS (
         UPDATE packaging_unit pu
            SET reserved_base = pu.reserved_base + take.amount, ol = pu.ol + 1, last_modified_dt = now()
           FROM take WHERE pu.id = take.id
       ), life AS (
         INSERT INTO reservation_life (reservation_id, product_id, qty_base, external_ref, expires_at)
         VALUES ($3::uuid, $5::bigint, $6::numeric, $7::text, $8::timestamptz)
       ), recorded AS (
         INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id)
         SELECT $3::uuid, take.id, take.p_key, take.amount, ${ledger.actorParameters.subject},
                ${ledger.actorParameters.requestId}
           FROM take
       ), appended AS (
         ${outbox.text}
       )
       ${ledger.text}`,
    values: [
      columnOf(takes, 'unitId'),
      columnOf(takes, 'qtyBase'),
      reservation.reservationId,
      columnOf(takes, 'pKey'),
      reservation.productId,
      reservation.qtyBase,
      reservation.externalRef,
      reservation.expiresAt,
      ...ledger.values,
      ...outbox.values,
    ],
  });
  signalEventsAfterCommit(tx);
}
