import { inProductUnit, reservationEvent } from '../allocation/events.js';
import { allocationErrors } from '../allocation/messages.js';
import { asUuid } from '../db/keys.js';
import type { Tx } from '../db/tx.js';
import { appendMovementsAndEvents, type Actor } from '../ledger/sql.js';
import { pickReserved, type PickTarget } from '../packaging-units/move-service.js';
import type { PackagingUnitRow } from '../packaging-units/sql.js';
import { StockChanges } from '../packaging-units/stock-changes.js';
import { baseCodeOf, movement, placeOf, quantityOf } from '../packaging-units/stock.js';
import { deleteUnits, updateUnitQuantities } from '../packaging-units/write-sql.js';
import { requireProductKind } from '../products/service.js';
import { Quantity } from '../units/quantity.js';
import { endReservations, pickedParts, type ReservationRow } from './sql.js';
import { holdingEvent, lockHolding } from './ending.js';
import { lockedReservation, lockedReservationWithParts, type ReservationCheck } from './service.js';

export interface PickInput {
  readonly pKey: string;
  readonly qty: Quantity;
  readonly target: PickTarget;
}

function requireActive(reservation: ReservationRow): void {
  if (reservation.state !== 'ACTIVE') {
    throw allocationErrors.notActive(reservation.reservationId, reservation.state);
  }
}

/**
 * D32: moves `qty` of what the reservation holds on unit `pKey` to the target; the goods stay reserved by it.
 * Picking from a unit it does not hold is picking more than it holds there (none): 409 overpick. Returns the unit
 * at the target.
 */
export async function pickReservation(
  tx: Tx,
  reservationId: string,
  input: PickInput,
  actor: Actor,
  mixedAllowed: boolean,
  check?: ReservationCheck,
): Promise<PackagingUnitRow> {
  const unitKey = asUuid(input.pKey);
  // A target Location takes no lock, so the unit may be locked with the reservation, one round trip less; a
  // target LoadUnit is locked before the unit (D21's order), which pickReserved then locks.
  const toLocation = 'locationId' in input.target;
  const { reservation, parts } = await lockedReservationWithParts(
    tx,
    reservationId,
    check,
    toLocation ? (unitKey ?? null) : null,
  );
  requireProductKind(input.qty, reservation.productBaseCode, 'qty');
  requireActive(reservation);
  const part = parts.find((held) => held.pKey === unitKey);
  const amount = input.qty.inSmallestUnit();
  if (!part || amount.gt(part.qtyBase)) {
    const held = inProductUnit(part?.qtyBase ?? '0', reservation.productBaseCode);
    throw allocationErrors.overpick(reservationId, input.pKey, input.qty.toString(), held.toString());
  }
  const picked = (arrivedPKey: string) => [
    reservationEvent('allocation.event.picked', {
      reservationId: reservation.reservationId,
      sku: reservation.sku,
      productBaseCode: reservation.productBaseCode,
      parts: [{ pKey: arrivedPKey, qtyBase: amount }],
    }),
  ];
  return pickReserved(
    tx,
    part.packagingUnitId!,
    input.qty,
    input.target,
    reservation.reservationId,
    actor,
    mixedAllowed,
    picked,
    (arrived, split) => pickedParts(part, amount.toString(), split ? arrived : undefined, actor),
  );
}

/**
 * D32 goods issue: everything the reservation holds leaves stock; a unit left empty is deleted. Issuing an issued
 * reservation again changes nothing. D27: `allocation.event.issued`, then each unit's event.
 */
export async function issueReservation(
  tx: Tx,
  reservationId: string,
  actor: Actor,
  check?: ReservationCheck,
): Promise<void> {
  const reservation = await lockedReservation(tx, reservationId, check);
  if (reservation.state === 'ISSUED') return;
  requireActive(reservation);
  const holding = await lockHolding(tx, reservation);
  const { amounts, units, locationIds } = holding;
  const changes = new StockChanges();
  const emptied: number[] = [];
  const remaining: { id: number; magnitude: string; code: string; reservedBase: string }[] = [];
  const entries = [];
  for (const [unitId, amount] of amounts) {
    const unit = units.get(unitId)!;
    const rest = quantityOf(unit).minus(Quantity.of(amount, baseCodeOf(unit.qtyCode)));
    const reservedRest = amount.negated().plus(unit.reservedBase).toString();
    if (rest.isZero()) {
      emptied.push(unitId);
      changes.deletedUnit(unit);
    } else {
      remaining.push({
        id: unitId,
        magnitude: rest.magnitude.toString(),
        code: rest.unitCode,
        reservedBase: reservedRest,
      });
      changes.unit('pu.event.changed', unitId);
    }
    entries.push(
      movement(
        'ISSUE',
        unit,
        { qty: unit.qtyBase, reserved: unit.reservedBase },
        { qty: rest.inSmallestUnit().toString(), reserved: reservedRest },
        { from: placeOf(unit, locationIds), reservationId: reservation.reservationId },
      ),
    );
  }
  await updateUnitQuantities(tx, remaining);
  await endReservations(tx, [reservation.id], holding.partIds, 'ISSUED');
  const unitEvents = await changes.events(tx);
  if (emptied.length > 0) await deleteUnits(tx, emptied);
  const issued = holdingEvent('allocation.event.issued', reservation, holding);
  await appendMovementsAndEvents(tx, entries, [issued, ...unitEvents], actor);
}
