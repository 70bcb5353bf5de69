import { reservationEvent } from '../allocation/events.js';
import type { Tx } from '../db/tx.js';
import type { EventType, NewEvent } from '../events/outbox.js';
import { appendMovementsAndEvents, type Actor, type MovementEntry } from '../ledger/sql.js';
import { renderedUnitEvents } from '../packaging-units/events.js';
import { locationIdsOf } from '../packaging-units/find-service.js';
import { selectUnitsByIds, type PackagingUnitRow } from '../packaging-units/sql.js';
import { movement, placeOf } from '../packaging-units/stock.js';
import { lockUnitsByIds } from '../packaging-units/write-sql.js';
import { Dec } from '../units/decimal.js';
import { endReservations, lowerReserved, selectParts, type ReservationPart, type ReservationRow } from './sql.js';

const ENDINGS = {
  RELEASED: { kind: 'RELEASE', event: 'allocation.event.released' },
  EXPIRED: { kind: 'EXPIRE', event: 'allocation.event.expired' },
} as const satisfies Record<string, { kind: 'RELEASE' | 'EXPIRE'; event: EventType }>;

export type Ending = keyof typeof ENDINGS;

/** The amount each unit's parts hold, by unit id, in id order (the order every writer locks units in). */
export function amountsByUnit(parts: readonly ReservationPart[]): Map<number, Dec> {
  const amounts = new Map<number, Dec>();
  for (const part of [...parts].sort((a, b) => a.packagingUnitId! - b.packagingUnitId!)) {
    amounts.set(part.packagingUnitId!, (amounts.get(part.packagingUnitId!) ?? new Dec(0)).plus(part.qtyBase));
  }
  return amounts;
}

/** What a locked reservation holds: the amount on each unit by id, the units as locked, their Locations. */
export interface Holding {
  readonly amounts: ReadonlyMap<number, Dec>;
  /** The active parts, by internal id. */
  readonly partIds: readonly number[];
  readonly units: ReadonlyMap<number, PackagingUnitRow>;
  readonly locationIds: Map<number, string>;
}

/**
 * Locks the parts of reservations the caller has locked, then every unit they lie on in one statement in id order
 * (the order every writer uses, also across reservations), and reads those units: one Holding per reservation.
 */
async function lockHoldings(tx: Tx, reservations: readonly ReservationRow[]): Promise<Holding[]> {
  const parts = await selectParts(
    tx,
    reservations.map((reservation) => reservation.reservationId),
    true,
  );
  const ids = [...new Set(parts.map((part) => part.packagingUnitId!))].sort((a, b) => a - b);
  await lockUnitsByIds(tx, ids);
  const unitRows = await selectUnitsByIds(tx, ids);
  const units = new Map(unitRows.map((unit) => [unit.id, unit]));
  const locationIds = await locationIdsOf(tx, unitRows);
  const partsOf = new Map<string, ReservationPart[]>(reservations.map((r) => [r.reservationId, []]));
  for (const part of parts) partsOf.get(part.reservationId)!.push(part);
  return reservations.map((reservation) => {
    const own = partsOf.get(reservation.reservationId)!;
    return { amounts: amountsByUnit(own), partIds: own.map((part) => part.id), units, locationIds };
  });
}

/** Locks one reservation's parts and units and reads them (release, issue). */
export async function lockHolding(tx: Tx, reservation: ReservationRow): Promise<Holding> {
  return (await lockHoldings(tx, [reservation]))[0]!;
}

/** D27: the reservation's event naming everything it holds, unit by unit. */
export function holdingEvent(
  type: Extract<EventType, `allocation.event.${string}`>,
  reservation: ReservationRow,
  { amounts, units }: Pick<Holding, 'amounts' | 'units'>,
): NewEvent {
  return reservationEvent(type, {
    reservationId: reservation.reservationId,
    sku: reservation.sku,
    productBaseCode: reservation.productBaseCode,
    parts: [...amounts].map(([unitId, amount]) => ({ pKey: units.get(unitId)!.pKey, qtyBase: amount })),
  });
}

/**
 * Ends ACTIVE reservations the caller has locked, all in a few statements however many they are, without taking
 * goods out: what each holds is unreserved where it lies, picked goods included (D32). Ledger rows and events are
 * those the reservations would have had ended one after the other, in id order: per reservation its event, then
 * one `pu.event.changed` per unit, each unit's reserved amount and version stepping down reservation by
 * reservation where several of them hold the same unit.
 */
export async function endHoldings(
  tx: Tx,
  reservations: readonly ReservationRow[],
  state: Ending,
  actor: Actor,
): Promise<void> {
  if (reservations.length === 0) return;
  const { kind, event } = ENDINGS[state];
  const holdings = await lockHoldings(tx, reservations);
  const { units, locationIds } = holdings[0]!;
  const current = new Map([...units].map(([id, unit]) => [id, unit]));
  const lowered = new Map<number, { amount: Dec; endings: number }>();
  const entries: MovementEntry[] = [];
  const changed: { type: 'pu.event.changed'; unit: PackagingUnitRow }[] = [];
  const reservationEvents: NewEvent[] = [];
  for (const [index, reservation] of reservations.entries()) {
    const { amounts } = holdings[index]!;
    reservationEvents.push(holdingEvent(event, reservation, { amounts, units }));
    for (const [unitId, amount] of amounts) {
      const before = current.get(unitId)!;
      const after = {
        ...before,
        reservedBase: new Dec(before.reservedBase).minus(amount).toString(),
        ol: before.ol + 1,
      };
      current.set(unitId, after);
      const total = lowered.get(unitId);
      lowered.set(unitId, { amount: (total?.amount ?? new Dec(0)).plus(amount), endings: (total?.endings ?? 0) + 1 });
      const place = placeOf(before, locationIds);
      entries.push(
        movement(
          kind,
          before,
          { qty: before.qtyBase, reserved: before.reservedBase },
          { qty: before.qtyBase, reserved: after.reservedBase },
          { from: place, to: place, reservationId: reservation.reservationId },
        ),
      );
      changed.push({ type: 'pu.event.changed', unit: after });
    }
  }
  const unitEvents = await renderedUnitEvents(tx, changed);
  const events: NewEvent[] = [];
  let next = 0;
  for (const [index, reservationEnded] of reservationEvents.entries()) {
    const count = holdings[index]!.amounts.size;
    events.push(reservationEnded, ...unitEvents.slice(next, next + count));
    next += count;
  }
  await endReservations(
    tx,
    reservations.map((reservation) => reservation.id),
    holdings.flatMap((holding) => holding.partIds),
    state,
  );
  await appendMovementsAndEvents(tx, entries, events, actor);
  // Last: its trigger locks the Products' stock_level rows, which concurrent batches of expiry share until commit.
  await lowerReserved(
    tx,
    [...lowered].map(([unitId, { amount, endings }]) => ({ unitId, qtyBase: amount.toString(), endings })),
  );
}
