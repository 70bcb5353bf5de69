import type { Request } from 'express';
import type { Actor, MovementEntry, MovementKind, StockPlace } from '../ledger/sql.js';
import { Dec } from '../units/decimal.js';
import { Quantity } from '../units/quantity.js';
import { unitByCode } from '../units/units.js';
import type { PackagingUnitRow } from './sql.js';

export type BaseCode = 'PC' | 'MG';

/** The kind's smallest unit, in which sums, reservations and the ledger are kept. */
export function baseCodeOf(unitCode: string): BaseCode {
  return unitByCode(unitCode)?.kind === 'Weight' ? 'MG' : 'PC';
}

export function actorOf(req: Request): Actor {
  return { subject: req.principal?.subject ?? 'anonymous', requestId: String(req.id) };
}

export function quantityOf(row: Pick<PackagingUnitRow, 'qtyMagnitude' | 'qtyCode'>): Quantity {
  return Quantity.of(row.qtyMagnitude, row.qtyCode);
}

/**
 * The unit as its representation shows it (D40): what reservations past their expiry still hold counts free, so
 * reserved and available are those of a reader, not of the stored row writers change.
 */
export function asShown<T extends Pick<PackagingUnitRow, 'reservedBase' | 'dueBase'>>(row: T): T {
  return Number(row.dueBase) === 0
    ? row
    : { ...row, reservedBase: new Dec(row.reservedBase).minus(row.dueBase).toString() };
}

/** qtyAvailable = quantity − active reservations, in the unit's own unit while nothing is reserved (D23). */
export function availableOf(row: Pick<PackagingUnitRow, 'qtyMagnitude' | 'qtyCode' | 'reservedBase'>): Quantity {
  const quantity = quantityOf(row);
  const reserved = Quantity.of(row.reservedBase, baseCodeOf(row.qtyCode));
  return reserved.isZero() ? quantity : quantity.minus(reserved);
}

/** Where a unit is, as the ledger and error messages name it. */
export function placeOf(
  row: Pick<PackagingUnitRow, 'transportUnitBK' | 'loadUnitPosition' | 'locationId'>,
  locationIds: ReadonlyMap<number, string>,
): StockPlace {
  if (row.transportUnitBK !== null && row.loadUnitPosition !== null) {
    return { transportUnitBK: row.transportUnitBK, loadUnitPosition: row.loadUnitPosition };
  }
  return { locationId: locationIds.get(row.locationId ?? -1) ?? '' };
}

/** A ledger entry for a unit whose stored state (quantity and reserved, in base units) went from before to after. */
export function movement(
  kind: MovementKind,
  unit: { pKey: string; productId: number; qtyCode: string },
  before: { qty: string; reserved: string },
  after: { qty: string; reserved: string },
  places: { from?: StockPlace; to?: StockPlace; reservationId?: string } = {},
): MovementEntry {
  return {
    packagingUnitPKey: unit.pKey,
    productId: unit.productId,
    kind,
    baseCode: baseCodeOf(unit.qtyCode),
    qtyBefore: before.qty,
    qtyAfter: after.qty,
    reservedBefore: before.reserved,
    reservedAfter: after.reserved,
    ...places,
  };
}
