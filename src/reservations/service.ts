import { reservationEvent } from '../allocation/events.js';
import { allocationErrors } from '../allocation/messages.js';
import { asUuid } from '../db/keys.js';
import type { Queryable, Tx } from '../db/tx.js';
import type { EventType, NewEvent } from '../events/outbox.js';
import type { Page, PageQuery } from '../http/pagination.js';
import { pageOf } from '../http/pagination.js';
import { appendMovementsAndEvents, type Actor } from '../ledger/sql.js';
import { renderedUnitEvents } from '../packaging-units/events.js';
import { locationIdsOf } from '../packaging-units/find-service.js';
import { selectUnitsByIds, type PackagingUnitRow } from '../packaging-units/sql.js';
import { movement, placeOf } from '../packaging-units/stock.js';
import { lockUnitsByIds } from '../packaging-units/write-sql.js';
import { Dec } from '../units/decimal.js';
import {
  endReservation,
  lockNextExpired,
  lockReservation,
  lowerReserved,
  selectParts,
  selectReservation,
  selectReservations,
  type ReservationFilter,
  type ReservationPart,
  type ReservationRow,
} from './sql.js';

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

/** The locked reservation, or the 404 of an id that was never issued (D23). */
export async function lockedReservation(tx: Tx, reservationId: string): Promise<ReservationRow> {
  const key = asUuid(reservationId);
  const reservation = key ? await lockReservation(tx, key) : undefined;
  if (!reservation) throw allocationErrors.reservationNotFound(reservationId);
  return reservation;
}

/** The amount each unit's parts hold, by unit id, in id order (the order every writer locks units in). */
function amountsByUnit(parts: readonly ReservationPart[]): Map<number, Dec> {
  const amounts = new Map<number, Dec>();
  for (const part of [...parts].sort((a, b) => a.packagingUnitId! - b.packagingUnitId!)) {
    amounts.set(part.packagingUnitId!, (amounts.get(part.packagingUnitId!) ?? new Dec(0)).plus(part.qtyBase));
  }
  return amounts;
}

/** What a locked reservation holds: the amount on each unit by id, the units as locked, their Locations. */
export interface Holding {
  readonly amounts: ReadonlyMap<number, Dec>;
  readonly units: ReadonlyMap<number, PackagingUnitRow>;
  readonly locationIds: Map<number, string>;
}

/** Locks the reservation's parts, then the units they lie on in id order, and reads them (release, expiry, issue). */
export async function lockHolding(tx: Tx, reservation: ReservationRow): Promise<Holding> {
  const amounts = amountsByUnit(await selectParts(tx, [reservation.reservationId], true));
  const ids = [...amounts.keys()];
  await lockUnitsByIds(tx, ids);
  const unitRows = await selectUnitsByIds(tx, ids);
  const units = new Map(unitRows.map((unit) => [unit.id, unit]));
  return { amounts, units, locationIds: await locationIdsOf(tx, unitRows) };
}

/** D27: the reservation's event naming everything it holds, unit by unit. */
export function holdingEvent(
  type: Extract<EventType, `allocation.event.${string}`>,
  reservation: ReservationRow,
  { amounts, units }: Holding,
): NewEvent {
  return reservationEvent(type, {
    reservationId: reservation.reservationId,
    sku: reservation.sku,
    productBaseCode: reservation.productBaseCode,
    parts: [...amounts].map(([unitId, amount]) => ({ pKey: units.get(unitId)!.pKey, qtyBase: amount })),
  });
}

const ENDINGS = {
  RELEASED: { kind: 'RELEASE', event: 'allocation.event.released' },
  EXPIRED: { kind: 'EXPIRE', event: 'allocation.event.expired' },
} as const satisfies Record<string, { kind: 'RELEASE' | 'EXPIRE'; event: EventType }>;

/**
 * Ends an ACTIVE reservation that the caller has locked, without taking goods out: what it holds is unreserved
 * where it lies, picked goods included (D32). D27: the reservation's event, then one `pu.event.changed` per unit.
 */
async function endHolding(
  tx: Tx,
  reservation: ReservationRow,
  state: keyof typeof ENDINGS,
  actor: Actor,
): Promise<void> {
  const { kind, event } = ENDINGS[state];
  const holding = await lockHolding(tx, reservation);
  const { amounts, units, locationIds } = holding;
  await lowerReserved(
    tx,
    [...amounts].map(([unitId, amount]) => ({ unitId, qtyBase: amount.toString() })),
  );
  await endReservation(tx, reservation.reservationId, state);
  const ended = [...amounts].map(([unitId, amount]) => {
    const unit = units.get(unitId)!;
    return {
      unit,
      after: { ...unit, reservedBase: new Dec(unit.reservedBase).minus(amount).toString(), ol: unit.ol + 1 },
    };
  });
  const reservationEnded = holdingEvent(event, reservation, holding);
  const unitEvents = await renderedUnitEvents(
    tx,
    ended.map(({ after }) => ({ type: 'pu.event.changed', unit: after })),
  );
  await appendMovementsAndEvents(
    tx,
    ended.map(({ unit, after }) => {
      const place = placeOf(unit, locationIds);
      return movement(
        kind,
        unit,
        { qty: unit.qtyBase, reserved: unit.reservedBase },
        { qty: unit.qtyBase, reserved: after.reservedBase },
        { from: place, to: place, reservationId: reservation.reservationId },
      );
    }),
    [reservationEnded, ...unitEvents],
    actor,
  );
}

/**
 * D23, D32: releasing is idempotent, and a reservation that ended otherwise (expired, issued) stays as it ended;
 * only an id that was never issued is unknown.
 */
export async function releaseReservation(tx: Tx, reservationId: string, actor: Actor): Promise<void> {
  const reservation = await lockedReservation(tx, reservationId);
  if (reservation.state === 'ACTIVE') await endHolding(tx, reservation, 'RELEASED', actor);
}

/**
 * D32: ends the next reservation past its expiry that no other instance is ending (SKIP LOCKED), or answers
 * false when there is none. A release, pick or issue holding the reservation's lock is skipped over; once it
 * commits, the reservation is either no longer ACTIVE or is found again by the next round.
 */
export async function expireNext(tx: Tx, actor: Actor): Promise<boolean> {
  const reservation = await lockNextExpired(tx);
  if (!reservation) return false;
  await endHolding(tx, reservation, 'EXPIRED', actor);
  return true;
}
