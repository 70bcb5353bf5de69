import { allocationErrors } from '../allocation/messages.js';
import { asUuid } from '../db/keys.js';
import type { Queryable, Tx } from '../db/tx.js';
import type { Page, PageQuery } from '../http/pagination.js';
import { pageOf } from '../http/pagination.js';
import type { Actor } from '../ledger/sql.js';
import type { PackagingUnitRow } from '../packaging-units/sql.js';
import { endHoldings } from './ending.js';
import {
  lockDueReservations,
  lockDueReservationsOfProducts,
  lockReservation,
  lockReservationAndParts,
  selectParts,
  selectReservation,
  selectReservations,
  type ReservationFilter,
  type ReservationPart,
  type ReservationRow,
} from './sql.js';

/** Who ends an expired reservation, on its ledger rows (D32), whichever transaction does it. */
export const EXPIRY_ACTOR = 'system:reservation-expiry';

/** A reservation with what it holds (or held when it ended), unit by unit. */
export interface ReservationDetail {
  readonly reservation: ReservationRow;
  readonly parts: readonly ReservationPart[];
}

export async function findReservation(db: Queryable, reservationId: string): Promise<ReservationDetail> {
  const key = asUuid(reservationId);
  const reservation = key ? await selectReservation(db, key) : undefined;
  if (!reservation) throw allocationErrors.reservationNotFound(reservationId);
  return { reservation, parts: await selectParts(db, [key!]) };
}

/** D32: newest first, paged as the ledger list (D31); the parts of a page in one more read. */
export async function findReservations(
  db: Queryable,
  filter: ReservationFilter,
  query: PageQuery,
): Promise<Page<ReservationDetail>> {
  const rows = await selectReservations(db, filter, { limit: query.limit + 1, after: query.after });
  const page = pageOf(rows, query.limit, (row) => row.id);
  // Grouped once: filtering all parts per reservation is page size × parts, up to 1000 × several thousand.
  const partsOf = new Map<string, ReservationPart[]>(page.items.map((row) => [row.reservationId, []]));
  const parts = await selectParts(db, [...partsOf.keys()]);
  for (const part of parts) partsOf.get(part.reservationId)!.push(part);
  return {
    items: page.items.map((reservation) => ({ reservation, parts: partsOf.get(reservation.reservationId)! })),
    next: page.next,
  };
}

/** D40: refuses (throws) a change whose If-Match does not name the reservation as locked; none: undefined. */
export type ReservationCheck = ((current: ReservationDetail) => void) | undefined;

/**
 * The locked reservation, or the 404 of an id that was never issued (D23); `check` sees it as its representation
 * shows it, before anything changes.
 */
export async function lockedReservation(
  tx: Tx,
  reservationId: string,
  check?: ReservationCheck,
): Promise<ReservationRow> {
  const key = asUuid(reservationId);
  const reservation = key ? await lockReservation(tx, key) : undefined;
  if (!reservation) throw allocationErrors.reservationNotFound(reservationId);
  if (check) check({ reservation, parts: await selectParts(tx, [reservation.reservationId]) });
  return reservation;
}

/**
 * lockedReservation with the parts it holds (or held), locked after it, in one round trip (a pick's); with
 * `unitPKey`, also the unit it holds by that key, locked after the parts.
 */
export async function lockedReservationWithParts(
  tx: Tx,
  reservationId: string,
  check?: ReservationCheck,
  unitPKey: string | null = null,
): Promise<ReservationDetail> {
  const key = asUuid(reservationId);
  const detail = key ? await lockReservationAndParts(tx, key, unitPKey) : undefined;
  if (!detail) throw allocationErrors.reservationNotFound(reservationId);
  check?.(detail);
  return detail;
}

/**
 * D23, D32: releasing is idempotent, and a reservation that ended otherwise (expired, issued) stays as it ended;
 * only an id that was never issued is unknown.
 */
export async function releaseReservation(
  tx: Tx,
  reservationId: string,
  actor: Actor,
  check?: ReservationCheck,
): Promise<void> {
  const reservation = await lockedReservation(tx, reservationId, check);
  if (reservation.state === 'ACTIVE') await endHoldings(tx, [reservation], 'RELEASED', actor);
}

/**
 * D32, D40: ends up to `limit` reservations past their expiry that no other transaction holds (SKIP LOCKED), all
 * together; answers how many. A release, pick or issue holding a reservation's lock is skipped over: once it
 * commits, the reservation is either no longer ACTIVE or is found again by the next round.
 */
export async function expireDue(tx: Tx, actor: Actor, limit: number): Promise<number> {
  const due = await lockDueReservations(tx, limit);
  await endHoldings(tx, due, 'EXPIRED', actor);
  return due.length;
}

/**
 * D40 for allocation and every writer of units: ends every reservation of the Products that is past its expiry,
 * waiting for those another transaction holds, so the writer that calls this before it locks any unit finds
 * their goods free. Reservations are locked before units, as every change of a reservation does (D32). Usually
 * there is none (one probe of the expiry index): the expiry work ends them within a second or so. Answers the units
 * they held as they were before, by id: a write's If-Match names the unit as its client read it, before the expiry
 * the write does first.
 */
export async function expireDueOfProducts(
  tx: Tx,
  skus: readonly string[],
  actor: Actor,
): Promise<ReadonlyMap<number, PackagingUnitRow>> {
  const due = await lockDueReservationsOfProducts(tx, skus);
  return endHoldings(tx, due, 'EXPIRED', { subject: EXPIRY_ACTOR, requestId: actor.requestId });
}
