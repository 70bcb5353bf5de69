import { asUuid } from '../db/keys.js';
import type { Tx } from '../db/tx.js';
import { appendMovementsAndEvents, type Actor, type MovementEntry } from '../ledger/sql.js';
import { requireLoadUnitAt } from '../load-units/service.js';
import { requireLocation } from '../master-data/service.js';
import { requireProductKind, requireProductReference } from '../products/service.js';
import { expireDueOfProducts } from '../reservations/service.js';
import type { Quantity } from '../units/quantity.js';
import { packagingUnitErrors } from './messages.js';
import { selectUnitByPKey, selectUnitsByIds, type PackagingUnitRow } from './sql.js';
import {
  deleteUnits,
  insertSplit,
  lockUnitIdByPKey,
  lockUnitsOfProductInLoadUnit,
  lockUnitsOfProductOnLocation,
  updateUnitQuantity,
  updateUnitState,
} from './write-sql.js';
import { locationIdsOf } from './find-service.js';
import { renderedUnitEvents } from './events.js';
import { StockChanges } from './stock-changes.js';
import { availableOf, movement, placeOf, quantityOf } from './stock.js';

const stateOf = (unit: PackagingUnitRow): { qty: string; reserved: string } => ({
  qty: quantityOf(unit).inSmallestUnit().toString(),
  reserved: unit.reservedBase,
});

async function lockedUnitByPKey(tx: Tx, pKey: string): Promise<PackagingUnitRow> {
  const key = asUuid(pKey);
  const id = key ? await lockUnitIdByPKey(tx, key) : undefined;
  const unit = id === undefined ? undefined : (await selectUnitsByIds(tx, [id]))[0];
  if (!unit) throw packagingUnitErrors.notFoundByPKey(pKey);
  return unit;
}

/** D22: a unit goes with its history kept in the ledger; reserved stock stays until released. */
export async function deleteUnitByPKey(
  tx: Tx,
  pKey: string,
  actor: Actor,
  checkUnit: (unit: PackagingUnitRow) => Promise<void> = async () => undefined,
): Promise<void> {
  const key = asUuid(pKey);
  const seen = key ? await selectUnitByPKey(tx, key) : undefined;
  const beforeExpiry = seen ? await expireDueOfProducts(tx, [seen.sku], actor) : new Map<number, PackagingUnitRow>();
  const unit = await lockedUnitByPKey(tx, pKey);
  // D40's If-Match: the unit as locked, before anything changes, the expiry above included.
  await checkUnit(beforeExpiry.get(unit.id) ?? unit);
  if (Number(unit.reservedBase) > 0) throw packagingUnitErrors.reserved(pKey);
  const from = placeOf(unit, await locationIdsOf(tx, [unit]));
  await deleteUnits(tx, [unit.id]);
  await appendMovementsAndEvents(
    tx,
    [movement('DELETE', unit, stateOf(unit), { qty: '0', reserved: '0' }, { from })],
    await new StockChanges().deletedUnit(unit).events(tx),
    actor,
  );
}

/**
 * Takes `wanted` (everything when undefined) from the units, oldest first, only from their unreserved part.
 * Returns for each unit what is taken; an empty list when there is nothing to take.
 */
function takeOldestFirst(
  units: readonly PackagingUnitRow[],
  wanted: Quantity | undefined,
): { unit: PackagingUnitRow; take: Quantity }[] {
  const taken = [];
  let remaining = wanted;
  for (const unit of units) {
    if (remaining !== undefined && !remaining.isPositive()) break;
    const available = availableOf(unit);
    if (!available.isPositive()) continue;
    const take = remaining === undefined ? available : available.min(remaining);
    taken.push({ unit, take });
    if (remaining !== undefined) remaining = remaining.minus(take);
  }
  return taken;
}

/** D22: removes that much (or all) of a Product from a Location; reserved quantity cannot be removed. */
export async function deleteOnLocation(
  tx: Tx,
  input: { sku: string; location: { locationId?: string | null; erpCode?: string | null }; quantity?: Quantity | null },
  actor: Actor,
): Promise<void> {
  const location = await requireLocation(tx, input.location);
  const product = await requireProductReference(tx, input.sku);
  requireProductKind(input.quantity, product.baseUnitCode, 'quantity');
  await expireDueOfProducts(tx, [input.sku], actor);
  const units = await lockUnitsOfProductOnLocation(tx, location.id, product.id);
  const named = input.location.locationId ?? input.location.erpCode ?? '';
  if (units.length === 0) throw packagingUnitErrors.noneOnLocation(input.sku, named);
  const total = units.map(quantityOf).reduce((sum, quantity) => sum.plus(quantity));
  const unreserved = units.map(availableOf).reduce((sum, quantity) => sum.plus(quantity));
  const wanted = input.quantity ? input.quantity.min(total) : total;
  if (wanted.compareTo(unreserved) > 0) throw packagingUnitErrors.reserved(input.sku);

  const entries: MovementEntry[] = [];
  const emptied: number[] = [];
  const changes = new StockChanges();
  const from = { locationId: location.locationId };
  for (const { unit, take } of takeOldestFirst(units, wanted)) {
    const rest = quantityOf(unit).minus(take);
    if (rest.isZero()) {
      emptied.push(unit.id);
      changes.deletedUnit(unit);
    } else {
      await updateUnitQuantity(tx, unit.id, rest.magnitude.toString(), rest.unitCode);
      changes.unit('pu.event.changed', unit.id);
    }
    entries.push(
      movement(
        'DELETE',
        unit,
        stateOf(unit),
        { qty: rest.inSmallestUnit().toString(), reserved: unit.reservedBase },
        { from },
      ),
    );
  }
  if (emptied.length > 0) await deleteUnits(tx, emptied);
  await appendMovementsAndEvents(tx, entries, await changes.events(tx), actor);
}

export interface ProblemReport {
  readonly sku: string;
  readonly quantity: Quantity;
  readonly messageNo: string | null;
  readonly messageText: string | null;
}

/**
 * D20: locks that quantity (at most what is there) of the Product's AVAILABLE units in the LoadUnit, oldest
 * first; a unit only partly affected is split and the locked part becomes a unit of its own.
 */
export async function reportProblem(
  tx: Tx,
  address: { transportUnitBK: string; luPos: string },
  report: ProblemReport,
  actor: Actor,
): Promise<void> {
  const loadUnit = await requireLoadUnitAt(tx, address.transportUnitBK, address.luPos);
  const product = await requireProductReference(tx, report.sku);
  requireProductKind(report.quantity, product.baseUnitCode, 'quantity');
  await expireDueOfProducts(tx, [report.sku], actor);
  const units = await lockUnitsOfProductInLoadUnit(tx, loadUnit.id, product.id, 'AVAILABLE');
  const taken = takeOldestFirst(units, report.quantity);
  if (taken.length === 0) {
    throw packagingUnitErrors.noneOnLocation(report.sku, `${address.transportUnitBK}/${address.luPos}`);
  }
  const message = { messageNo: report.messageNo, messageText: report.messageText };
  const place = { transportUnitBK: address.transportUnitBK, loadUnitPosition: address.luPos };
  const entries: MovementEntry[] = [];
  const changes = new StockChanges();
  for (const { unit, take } of taken) {
    const rest = quantityOf(unit).minus(take);
    changes.unit('pu.event.changed', unit.id);
    if (rest.isZero()) {
      await updateUnitState(tx, unit.id, 'LOCKED', message);
      entries.push(movement('LOCK', unit, stateOf(unit), stateOf(unit), { from: place, to: place }));
      continue;
    }
    await updateUnitQuantity(tx, unit.id, rest.magnitude.toString(), rest.unitCode);
    const split = await insertSplit(
      tx,
      unit.id,
      { magnitude: take.magnitude.toString(), code: take.unitCode },
      {
        state: 'LOCKED',
        message,
      },
    );
    changes.unit('pu.event.created', split.id);
    const moved = take.inSmallestUnit().toString();
    const splitUnit = { pKey: split.pKey, productId: unit.productId, qtyCode: take.unitCode };
    entries.push(
      movement(
        'SPLIT',
        unit,
        stateOf(unit),
        { qty: rest.inSmallestUnit().toString(), reserved: unit.reservedBase },
        { from: place, to: place },
      ),
      movement(
        'SPLIT',
        splitUnit,
        { qty: '0', reserved: '0' },
        { qty: moved, reserved: '0' },
        { from: place, to: place },
      ),
      movement(
        'LOCK',
        splitUnit,
        { qty: moved, reserved: '0' },
        { qty: moved, reserved: '0' },
        { from: place, to: place },
      ),
    );
  }
  await appendMovementsAndEvents(tx, entries, await changes.events(tx), actor);
}

/** D20: a LOCKED (or QC_LOCKED) unit becomes AVAILABLE again and loses its message; AVAILABLE stays as it is. */
export async function releaseUnit(tx: Tx, pKey: string, actor: Actor): Promise<PackagingUnitRow> {
  const unit = await lockedUnitByPKey(tx, pKey);
  if (unit.state === 'AVAILABLE') return unit;
  await updateUnitState(tx, unit.id, 'AVAILABLE', { messageNo: null, messageText: null });
  const place = placeOf(unit, await locationIdsOf(tx, [unit]));
  const released = (await selectUnitsByIds(tx, [unit.id]))[0]!;
  await appendMovementsAndEvents(
    tx,
    [movement('UNLOCK', unit, stateOf(unit), stateOf(unit), { from: place, to: place })],
    await renderedUnitEvents(tx, [{ type: 'pu.event.changed', unit: released }]),
    actor,
  );
  return released;
}
