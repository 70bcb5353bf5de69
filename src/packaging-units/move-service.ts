import { asUuid } from '../db/keys.js';
import type { Tx } from '../db/tx.js';
import { ApiError, notFound, validationError } from '../http/api-error.js';
import { LoadUnitMessageKeys, loadUnitErrors } from '../load-units/messages.js';
import {
  appendMovementsAndEvents,
  type Actor,
  type AlsoWritten,
  type MovementEntry,
  type StockPlace,
} from '../ledger/sql.js';
import type { NewEvent } from '../events/outbox.js';
import {
  admitProduct,
  creationRefusal,
  findLoadUnitByPKey,
  requireLoadUnitAt,
  type LoadUnitRow,
} from '../load-units/service.js';
import type { LocationRow } from '../master-data/location-sql.js';
import { findLocationsByIds, requireLocation } from '../master-data/service.js';
import { requireProductKind, requireProductReference, requireProductReferences } from '../products/service.js';
import { expireDueOfProducts } from '../reservations/service.js';
import { Dec } from '../units/decimal.js';
import type { Quantity } from '../units/quantity.js';
import { packagingUnitErrors } from './messages.js';
import type {
  MoveBetweenLocationsInput,
  MoveFromLoadUnitInput,
  MoveToLoadUnitInput,
  MoveUnitInput,
} from './move-schemas.js';
import { selectUnitByPKey, selectUnitsByIds, type PackagingUnitRow } from './sql.js';
import { lockPickTargetLoadUnit } from './pick-sql.js';
import {
  reduceAndSplit,
  lockUnitIdByPKey,
  lockUnitsOfProductInLoadUnit,
  lockUnitsOfProductOnLocation,
  updateUnitHolder,
} from './write-sql.js';
import { locationIdsOf } from './find-service.js';
import { StockChanges } from './stock-changes.js';
import { availableOf, movement, placeOf, quantityOf } from './stock.js';

/**
 * Who moves, whether LoadUnits may mix Products, and where the operation gathers what it changed (D27) and its
 * ledger rows, written together at its end.
 */
interface MoveContext {
  readonly actor: Actor;
  readonly mixedAllowed: boolean;
  readonly changes: StockChanges;
  readonly entries: MovementEntry[];
}

function moveContext(actor: Actor, mixedAllowed: boolean): MoveContext {
  return { actor, mixedAllowed, changes: new StockChanges(), entries: [] };
}

/** The ledger rows and the events of everything the operation moved. */
async function recordMoves(tx: Tx, { actor, changes, entries }: MoveContext): Promise<void> {
  await appendMovementsAndEvents(tx, entries, await changes.events(tx), actor);
}

/** Where moved stock goes: a LoadUnit (locked by the caller) or a Location. */
type Target = { loadUnit: LoadUnitRow; place: StockPlace } | { location: LocationRow; place: StockPlace };

const holderOf = (target: Target): { loadUnitId: number | null; locationId: number | null } =>
  'loadUnit' in target
    ? { loadUnitId: target.loadUnit.id, locationId: null }
    : { loadUnitId: null, locationId: target.location.id };

const isAt = (unit: PackagingUnitRow, target: Target): boolean =>
  'loadUnit' in target ? unit.loadUnitId === target.loadUnit.id : unit.locationId === target.location.id;

const base = (quantity: Quantity): string => quantity.inSmallestUnit().toString();

/** Where the moved stock was and went, and the reservation that moved it (a pick's), as the ledger names them. */
interface MovePlaces {
  readonly from: StockPlace;
  readonly to: StockPlace;
  readonly reservationId?: string;
}

/**
 * Splits `take` off the unit into a new unit at the target that records its parent; `reservedTake` of it (a
 * pick's, D32) leaves the source's reserved amount for the new unit's. Returns the new unit's id. D27: the source
 * is changed and the new unit created.
 */
async function splitOff(
  tx: Tx,
  unit: PackagingUnitRow,
  take: Quantity,
  reservedTake: string,
  holder: { loadUnitId: number | null; locationId: number | null },
  kind: 'SPLIT' | 'PICK',
  places: MovePlaces,
  { changes, entries }: MoveContext,
): Promise<number> {
  const quantity = quantityOf(unit);
  const rest = quantity.minus(take);
  const reservedRest = new Dec(unit.reservedBase).minus(reservedTake).toString();
  const { source, split } = await reduceAndSplit(
    tx,
    unit.id,
    { magnitude: take.magnitude.toString(), code: take.unitCode },
    { ...holder, reservedBase: reservedTake },
    { magnitude: rest.magnitude.toString(), code: rest.unitCode, reservedBase: reservedRest },
  );
  changes.unit('pu.event.changed', unit.id, source).unit('pu.event.created', split.id, split);
  entries.push(
    movement(
      kind,
      unit,
      { qty: base(quantity), reserved: unit.reservedBase },
      { qty: base(rest), reserved: reservedRest },
      places,
    ),
    movement(
      kind,
      { pKey: split.pKey, productId: unit.productId, qtyCode: take.unitCode },
      { qty: '0', reserved: '0' },
      { qty: base(take), reserved: reservedTake },
      places,
    ),
  );
  return split.id;
}

/** Moves whole units, their reservations with them. D27: each unit is moved. */
async function moveWhole(
  tx: Tx,
  units: readonly PackagingUnitRow[],
  holder: { loadUnitId: number | null; locationId: number | null },
  kind: 'MOVE' | 'PICK',
  places: MovePlaces,
  { changes, entries }: MoveContext,
): Promise<void> {
  if (units.length === 0) return;
  const moved = new Map(
    (
      await updateUnitHolder(
        tx,
        units.map((unit) => unit.id),
        holder,
      )
    ).map((row) => [row.id, row]),
  );
  for (const unit of units) {
    changes.unit('pu.event.moved', unit.id, moved.get(unit.id));
    const state = { qty: base(quantityOf(unit)), reserved: unit.reservedBase };
    entries.push(movement(kind, unit, state, state, places));
  }
}

const inPlace = (): ApiError => validationError([{ path: 'target', message: 'is where the stock already is' }]);

/** D21: moving to where the stock already is is no move. */
function refuseMoveInPlace(units: readonly PackagingUnitRow[], target: Target): void {
  if (units.some((unit) => isAt(unit, target))) throw inPlace();
}

/** D17: the target LoadUnit takes the Product, or refuses it. */
async function admitInto(tx: Tx, target: Target, unit: PackagingUnitRow, context: MoveContext): Promise<void> {
  if (!('loadUnit' in target)) return;
  if (await admitProduct(tx, target.loadUnit, { id: unit.productId, sku: unit.sku }, context.mixedAllowed)) {
    context.changes.loadUnit('lu.event.changed', target.loadUnit.id);
  }
}

/**
 * D21, the one way stock moves. Without `wanted` every unit moves whole, reservations included. With `wanted`,
 * that much or less moves, oldest units first and only their unreserved part: a unit moves whole when all of
 * it is wanted and none of it is reserved; otherwise the wanted part is split off into a new unit at the
 * target that records its parent. Returns the ids of the units that arrived at the target. D27: a whole unit is
 * moved; a split is the source changed and the new unit created.
 */
async function moveUnits(
  tx: Tx,
  units: readonly PackagingUnitRow[],
  wanted: Quantity | undefined,
  target: Target,
  from: StockPlace,
  context: MoveContext,
): Promise<number[]> {
  refuseMoveInPlace(units, target);
  if (units[0]) await admitInto(tx, target, units[0], context);
  const holder = holderOf(target);
  const places = { from, to: target.place };
  const wholeUnits: PackagingUnitRow[] = [];
  const arrived: number[] = [];
  let remaining = wanted;
  for (const unit of units) {
    if (remaining !== undefined && !remaining.isPositive()) break;
    const quantity = quantityOf(unit);
    const unreserved = Number(unit.reservedBase) === 0;
    if (remaining === undefined || (unreserved && remaining.compareTo(quantity) >= 0)) {
      wholeUnits.push(unit);
      // Noted now, so the events keep the units' order (oldest first) among the splits'.
      context.changes.unit('pu.event.moved', unit.id);
      if (remaining !== undefined) remaining = remaining.minus(quantity);
      continue;
    }
    const take = availableOf(unit).min(remaining);
    if (!take.isPositive()) continue;
    remaining = remaining.minus(take);
    arrived.push(await splitOff(tx, unit, take, '0', holder, 'SPLIT', places, context));
  }
  await moveWhole(tx, wholeUnits, holder, 'MOVE', places, context);
  arrived.push(...wholeUnits.map((unit) => unit.id));
  if (arrived.length === 0) throw packagingUnitErrors.reserved(units[0]?.sku ?? '');
  return arrived;
}

/** Where a pick takes goods (D32): a LoadUnit, created on the spot when its type is given, or a Location. */
export type PickTarget = { transportUnitBK: string; luPos: string; loadUnitType?: string } | { locationId: string };

/**
 * D32 into a LoadUnit: locks it (created on the spot when its type is given, D15), then the unit, and admits the
 * unit's Product (D17), in one round trip; notes the LoadUnit's event. Answers the target and the unit as locked.
 */
async function lockLoadUnitTarget(
  tx: Tx,
  reference: { transportUnitBK: string; luPos: string; loadUnitType?: string },
  unitId: number,
  { changes, mixedAllowed }: MoveContext,
): Promise<{ target: Target; unit: PackagingUnitRow }> {
  const { transportUnitBK, luPos: position, loadUnitType } = reference;
  const refusal = creationRefusal({ transportUnitBK, position, loadUnitType });
  const found = await lockPickTargetLoadUnit(
    tx,
    { transportUnitBK, position, newLoadUnitType: refusal ? null : loadUnitType! },
    unitId,
    mixedAllowed,
  );
  if (!found) throw refusal ?? new Error(`LoadUnit ${transportUnitBK}/${position} neither found nor created`);
  const unit = found.unit ?? (await lockedUnits(tx, [unitId]))[0]!;
  if (found.refusal === 'in-place') throw inPlace();
  if (found.refusal === 'assigned') throw loadUnitErrors.alreadyAssigned(found.loadUnit.pKey, unit.sku);
  const now = { loadUnit: found.loadUnit, product: found.product };
  if (found.created) changes.loadUnit('lu.event.created', found.loadUnit.id, now);
  if (found.assigned) changes.loadUnit('lu.event.changed', found.loadUnit.id, now);
  return { target: { loadUnit: found.loadUnit, place: { transportUnitBK, loadUnitPosition: position } }, unit };
}

/**
 * D32: moves `amount` of what reservation `reservationId` holds on the `unit` to the target, split as D21 splits,
 * the moved amount staying reserved (on the new unit, or on the unit when it moves whole: all of it is the
 * reservation's). Ledger rows PICK, the units' events, then `pickedEvents(arrived pKey)`, and the reservation's
 * parts as `pickedParts` changes them (split: the unit arrived is a new one), in one statement. Returns the unit at
 * the target. The caller has locked the reservation first; for a target Location, whose row takes no lock, the
 * unit too; a target LoadUnit is locked here, before the unit, in the order every move takes them.
 */
export async function pickReserved(
  tx: Tx,
  unitId: number,
  amount: Quantity,
  targetRef: PickTarget,
  reservationId: string,
  actor: Actor,
  mixedAllowed: boolean,
  pickedEvents: (arrivedPKey: string) => NewEvent[],
  pickedParts: (arrived: PackagingUnitRow, split: boolean) => AlsoWritten,
): Promise<PackagingUnitRow> {
  const context = moveContext(actor, mixedAllowed);
  let target: Target;
  let unit: PackagingUnitRow;
  if ('locationId' in targetRef) {
    target = await locationTarget(tx, targetRef);
    unit = (await lockedUnits(tx, [unitId]))[0]!;
    refuseMoveInPlace([unit], target);
  } else {
    ({ target, unit } = await lockLoadUnitTarget(tx, targetRef, unitId, context));
  }
  // The Locations the events render are read once: the source's (a unit lying loose) here, the target's is known.
  const known = await findLocationsByIds(tx, unit.locationId === null ? [] : [unit.locationId]);
  if ('location' in target) known.set(target.location.id, target.location);
  const locationIds = new Map([...known].map(([id, location]) => [id, location.locationId]));
  const places = { from: placeOf(unit, locationIds), to: target.place, reservationId };
  const whole = amount.inSmallestUnit().eq(unit.qtyBase);
  const arrivedId = whole
    ? (await moveWhole(tx, [unit], holderOf(target), 'PICK', places, context), unit.id)
    : await splitOff(tx, unit, amount, base(amount), holderOf(target), 'PICK', places, context);
  // The arrived unit is one of those the events are rendered from, as the statement that moved it answered it.
  const { events, units } = await context.changes.eventsAndUnits(tx, known);
  const arrived = units.get(arrivedId)!;
  await appendMovementsAndEvents(
    tx,
    context.entries,
    [...events, ...pickedEvents(arrived.pKey)],
    actor,
    pickedParts(arrived, !whole),
  );
  return arrived;
}

async function lockedUnits(tx: Tx, ids: readonly number[]): Promise<PackagingUnitRow[]> {
  return ids.length === 0 ? [] : selectUnitsByIds(tx, ids);
}

async function loadUnitTarget(tx: Tx, transportUnitBK: string, position: string): Promise<Target> {
  const loadUnit = await requireLoadUnitAt(tx, transportUnitBK, position);
  return { loadUnit, place: { transportUnitBK, loadUnitPosition: position } };
}

async function locationTarget(
  tx: Tx,
  reference: { locationId?: string | null; erpCode?: string | null },
): Promise<Target> {
  const location = await requireLocation(tx, reference);
  return { location, place: { locationId: location.locationId } };
}

/** D21: an unknown target LoadUnit is onTuNotExists, also when the request names it by pKey. */
async function targetLoadUnitByPKey(tx: Tx, pKey: string): Promise<LoadUnitRow> {
  try {
    return await findLoadUnitByPKey(tx, pKey);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw notFound(LoadUnitMessageKeys.onTuNotExists, `No target LoadUnit with pKey [${pKey}] exists`, [pKey]);
    }
    throw error;
  }
}

/**
 * Update a unit: move it whole or in part to a Location or into a LoadUnit; returns the unit at the target.
 * `checkUnit` sees the unit as locked, before anything changes, and throws to refuse the move.
 */
export async function moveUnit(
  tx: Tx,
  pKey: string,
  input: MoveUnitInput,
  actor: Actor,
  mixedAllowed: boolean,
  checkUnit: (unit: PackagingUnitRow) => Promise<void> = async () => undefined,
): Promise<PackagingUnitRow> {
  const key = asUuid(pKey);
  const seen = key ? await selectUnitByPKey(tx, key) : undefined;
  if (!key || !seen) throw packagingUnitErrors.notFoundByPKey(pKey);
  if (input.pKey && input.pKey.toLowerCase() !== seen.pKey) {
    throw validationError([{ path: 'pKey', message: 'must match the pKey in the path' }]);
  }
  if (input.product && input.product.sku !== seen.sku) {
    throw validationError([{ path: 'product.sku', message: `must be the unit's product '${seen.sku}'` }]);
  }
  requireProductKind(input.quantity, seen.productBaseCode, 'quantity');
  // The target LoadUnit is locked before the unit: LoadUnits first, then units, as in every other move.
  let target: Target;
  if (input.loadUnit) {
    const lu = input.loadUnit.pKey
      ? await targetLoadUnitByPKey(tx, input.loadUnit.pKey)
      : { transportUnitBK: input.loadUnit.transportUnitBK!, physicalPosition: input.loadUnit.physicalPosition! };
    target = await loadUnitTarget(tx, lu.transportUnitBK, lu.physicalPosition);
  } else {
    target = await locationTarget(tx, input.actualLocation ?? {});
  }
  const beforeExpiry = await expireDueOfProducts(tx, [seen.sku], actor);
  const id = await lockUnitIdByPKey(tx, key);
  const unit = id === undefined ? undefined : (await lockedUnits(tx, [id]))[0];
  if (!unit) throw packagingUnitErrors.notFoundByPKey(pKey);
  // D33's If-Match: the unit as locked, before anything moves (D40: also before the expiry above).
  await checkUnit(beforeExpiry.get(unit.id) ?? unit);
  const from = placeOf(unit, await locationIdsOf(tx, [unit]));
  const context = moveContext(actor, mixedAllowed);
  const [arrivedId] = await moveUnits(tx, [unit], input.quantity ?? undefined, target, from, context);
  await recordMoves(tx, context);
  return (await lockedUnits(tx, [arrivedId!]))[0]!;
}

/** packaging-units-movebetweenlocations: every item in the one transaction (D21). */
export async function moveBetweenLocations(tx: Tx, items: MoveBetweenLocationsInput, actor: Actor): Promise<void> {
  const products = await requireProductReferences(
    tx,
    items.map((item) => item.product.sku),
  );
  // D40: before any unit is locked, for all items at once, so their reservations are locked in one id order.
  await expireDueOfProducts(tx, [...products.keys()], actor);
  const context = moveContext(actor, false);
  for (const [index, item] of items.entries()) {
    const product = products.get(item.product.sku)!;
    requireProductKind(item.quantity, product.baseUnitCode, `[${index}].quantity`);
    const source = await requireLocation(tx, item.actualLocation);
    const target = await locationTarget(tx, item.targetLocation);
    const units = await lockUnitsOfProductOnLocation(tx, source.id, product.id);
    if (units.length === 0) throw packagingUnitErrors.noneOnLocation(product.sku, item.actualLocation.locationId);
    await moveUnits(tx, units, item.quantity ?? undefined, target, { locationId: source.locationId }, context);
  }
  await recordMoves(tx, context);
}

/** packaging-units-movefromlocationtoloadunit: from a Location named by ERP code into an existing LoadUnit. */
export async function moveLocationToLoadUnit(
  tx: Tx,
  input: MoveToLoadUnitInput,
  actor: Actor,
  mixedAllowed: boolean,
): Promise<void> {
  const product = await requireProductReference(tx, input.product.sku);
  requireProductKind(input.quantity, product.baseUnitCode, 'quantity');
  const source = await requireLocation(tx, input.actualLocation);
  const target = await loadUnitTarget(tx, input.targetTransportUnitBK, input.targetLoadUnitPosition);
  await expireDueOfProducts(tx, [product.sku], actor);
  const units = await lockUnitsOfProductOnLocation(tx, source.id, product.id);
  if (units.length === 0) throw packagingUnitErrors.noneOnLocation(product.sku, input.actualLocation.erpCode);
  const context = moveContext(actor, mixedAllowed);
  await moveUnits(tx, units, input.quantity ?? undefined, target, { locationId: source.locationId }, context);
  await recordMoves(tx, context);
}

/** packaging-units-movepuquantity: out of a LoadUnit into another LoadUnit or onto a Location. */
export async function moveFromLoadUnit(
  tx: Tx,
  sourceAddress: { transportUnitBK: string; luPos: string },
  input: MoveFromLoadUnitInput,
  actor: Actor,
  mixedAllowed: boolean,
): Promise<void> {
  const product = await requireProductReference(tx, input.product.sku);
  requireProductKind(input.quantity, product.baseUnitCode, 'quantity');
  const { transportUnitBK, luPos } = sourceAddress;
  let target: Target;
  let source: LoadUnitRow;
  if (input.actualLocation) {
    source = await requireLoadUnitAt(tx, transportUnitBK, luPos);
    target = await locationTarget(tx, input.actualLocation);
  } else {
    // Both LoadUnits are locked in one fixed order, so opposite moves between two LoadUnits cannot deadlock.
    const targetAddress = { transportUnitBK: input.targetTransportUnitBK!, luPos: input.targetLoadUnitPosition! };
    const sourceFirst =
      `${transportUnitBK}\u0000${luPos}` <= `${targetAddress.transportUnitBK}\u0000${targetAddress.luPos}`;
    if (sourceFirst) source = await requireLoadUnitAt(tx, transportUnitBK, luPos);
    target = await loadUnitTarget(tx, targetAddress.transportUnitBK, targetAddress.luPos);
    if (!sourceFirst) source = await requireLoadUnitAt(tx, transportUnitBK, luPos);
  }
  await expireDueOfProducts(tx, [product.sku], actor);
  const units = await lockUnitsOfProductInLoadUnit(tx, source!.id, product.id);
  if (units.length === 0) throw packagingUnitErrors.noneOnLocation(product.sku, `${transportUnitBK}/${luPos}`);
  const context = moveContext(actor, mixedAllowed);
  const from = { transportUnitBK, loadUnitPosition: luPos };
  await moveUnits(tx, units, input.quantity ?? undefined, target, from, context);
  await recordMoves(tx, context);
}
