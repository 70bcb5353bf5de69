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
 * goods out: what each holds is unreserved where it lies, picked goods included (D32). Each reservation gets its
 * ledger rows, in id order, a unit's reserved amount stepping down reservation by reservation where several hold the
 * same unit, and its event; each unit then one `pu.event.changed` with its state as the transaction commits it, and
 * one version step: the states between exist only inside the transaction and no reader ever sees them (D40).
 * Answers the units as they were, locked, before the reservations ended, by id.
 */
export async function endHoldings(
  tx: Tx,
  reservations: readonly ReservationRow[],
  state: Ending,
  actor: Actor,
): Promise<ReadonlyMap<number, PackagingUnitRow>> {
  if (reservations.length === 0) return new Map();
  const { kind, event } = ENDINGS[state];
  const holdings = await lockHoldings(tx, reservations);
  const { units, locationIds } = holdings[0]!;
  const reserved = new Map([...units].map(([id, unit]) => [id, new Dec(unit.reservedBase)]));
  const entries: MovementEntry[] = [];
  const events: NewEvent[] = [];
  for (const [index, reservation] of reservations.entries()) {
    const { amounts } = holdings[index]!;
    events.push(holdingEvent(event, reservation, { amounts, units }));
    for (const [unitId, amount] of amounts) {
      const unit = units.get(unitId)!;
      const before = reserved.get(unitId)!;
      const after = before.minus(amount);
      reserved.set(unitId, after);
      const place = placeOf(unit, locationIds);
      entries.push(
        movement(
          kind,
          unit,
          { qty: unit.qtyBase, reserved: before.toString() },
          { qty: unit.qtyBase, reserved: after.toString() },
          { from: place, to: place, reservationId: reservation.reservationId },
        ),
      );
    }
  }
  const changed = [...reserved].map(([unitId, after]) => {
    const unit = units.get(unitId)!;
    return { type: 'pu.event.changed' as const, unit: { ...unit, reservedBase: after.toString(), ol: unit.ol + 1 } };
  });
  events.push(...(await renderedUnitEvents(tx, changed)));
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
    [...reserved].map(([unitId, after]) => ({
      unitId,
      qtyBase: new Dec(units.get(unitId)!.reservedBase).minus(after).toString(),
    })),
  );
  return units;
}
