import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/tx.js';
import type { Actor } from '../ledger/sql.js';
import { locationGroupIdsWithChildren } from '../master-data/service.js';
import { renderedUnitEvents } from '../packaging-units/events.js';
import { baseCodeOf, movement } from '../packaging-units/stock.js';
import { productErrors } from '../products/messages.js';
import { requireProductKind, requireProductReference } from '../products/service.js';
import { expireDueOfProducts } from '../reservations/service.js';
import { Dec } from '../units/decimal.js';
import { Quantity } from '../units/quantity.js';
import { reservationEvent } from './events.js';
import { allocationErrors } from './messages.js';
import type { AllocationRequest } from './schemas.js';
import { addReservations, lockNextCandidates, type AllocatedProduct, type CandidateUnit } from './sql.js';

export interface AllocationOptions {
  readonly groupNames: readonly string[] | undefined;
  readonly allowPartial: boolean;
}

export interface AllocationResult {
  readonly transportUnitBK: string;
  readonly loadUnitPosition: string;
  readonly sku: string;
  readonly actualErpCode: string | null;
  readonly qtyAllocated: Quantity;
  readonly reservationId: string;
}

// Each round reads this many candidates at most (few first: each is joined to its LoadUnit and place), and locks
// those of them whose free amounts cover what is still wanted; a round that falls short reads more.
const FIRST_BATCH = 8;
const MAX_BATCH = 256;

/**
 * D23: the amount in the requested unit when it is a whole number of it, otherwise in the Product's base
 * unit when exact there, otherwise in the kind's smallest unit.
 */
function expressed(baseAmount: Dec, requested: Quantity, productBaseCode: string): Quantity {
  const amount = Quantity.of(baseAmount, baseCodeOf(requested.unitCode));
  const inRequested = amount.to(requested.unitCode);
  if (inRequested?.magnitude.isInteger()) return inRequested;
  return amount.to(productBaseCode) ?? amount;
}

/**
 * Reserves up to the requested quantity, FEFO then FIFO, under row locks taken in that one order. Each LoadUnit
 * it took from is one result element; one reservation id covers the request. D27: the reservation's event, then
 * one `pu.event.changed` per unit reserved from, rendered from the locked rows with the reservation applied and
 * written by the statement that reserves: two statements in all while the rows are locked.
 */
export async function allocate(
  tx: Tx,
  request: AllocationRequest,
  options: AllocationOptions,
  actor: Actor,
): Promise<AllocationResult[]> {
  let groupIds: number[] | null = null;
  if (options.groupNames?.length) {
    // An unknown SKU or a quantity of another kind is named before an unknown LocationGroup.
    requireProductKind(request.qty, (await requireProductReference(tx, request.sku)).baseUnitCode, 'qty');
    groupIds = await locationGroupIdsWithChildren(tx, options.groupNames);
  }

  const wanted = request.qty.inSmallestUnit();
  let remaining = wanted;
  let product: AllocatedProduct | undefined;
  // D40: goods of a reservation past its expiry are free the moment it expires. The first round looks for such
  // reservations of the Product and, finding one, locks no unit; they are then ended here, before any unit is
  // locked, which keeps the one lock order and lets the candidates be read as they are.
  let unlessDue = true;
  const takes: { unit: CandidateUnit; amount: Dec }[] = [];
  const seen: number[] = [];
  // The first round also finds the Product; a Product that is not AVAILABLE has no candidates (D23) and is then
  // short like any other.
  for (let batch = FIRST_BATCH; product === undefined || remaining.gt(0); batch = Math.min(batch * 4, MAX_BATCH)) {
    const round = await lockNextCandidates(tx, {
      sku: request.sku,
      groupIds,
      seen,
      remaining: remaining.toString(),
      limit: batch,
      unlessDue,
    });
    if (!round.product) throw productErrors.notFoundBySku(request.sku);
    if (!product) requireProductKind(request.qty, round.product.baseUnitCode, 'qty');
    product = round.product;
    unlessDue = false;
    if (round.due) {
      await expireDueOfProducts(tx, [request.sku], actor);
      continue;
    }
    if (round.candidateIds.length === 0) break;
    seen.push(...round.candidateIds);
    for (const unit of round.allocatable) {
      if (remaining.lte(0)) break;
      const free = new Dec(unit.qtyBase).minus(unit.reservedBase);
      const amount = Dec.min(free, remaining);
      takes.push({ unit, amount });
      remaining = remaining.minus(amount);
    }
  }

  const allocated = wanted.minus(remaining);
  if (!options.allowPartial && remaining.gt(0)) {
    throw allocationErrors.insufficient(
      request.sku,
      request.qty.toString(),
      expressed(allocated, request.qty, product.baseUnitCode).toString(),
    );
  }
  if (takes.length === 0) return [];

  const reservationId = randomUUID();
  const reserved = takes.map(({ unit, amount }) => ({
    unit,
    after: { ...unit, reservedBase: new Dec(unit.reservedBase).plus(amount).toString(), ol: unit.ol + 1 },
  }));
  const events = [
    reservationEvent('allocation.event.reserved', {
      reservationId,
      sku: product.sku,
      productBaseCode: product.baseUnitCode,
      parts: takes.map(({ unit, amount }) => ({ pKey: unit.pKey, qtyBase: amount })),
    }),
    ...(await renderedUnitEvents(
      tx,
      reserved.map(({ after }) => ({ type: 'pu.event.changed', unit: after })),
    )),
  ];
  await addReservations(
    tx,
    {
      reservationId,
      productId: takes[0]!.unit.productId,
      qtyBase: allocated.toString(),
      externalRef: request.externalRef ?? null,
      expiresAt: request.expiresAt ?? null,
    },
    takes.map(({ unit, amount }) => ({ unitId: unit.id, pKey: unit.pKey, qtyBase: amount.toString() })),
    reserved.map(({ unit, after }) => {
      const place = { transportUnitBK: unit.transportUnitBK, loadUnitPosition: unit.loadUnitPosition };
      return movement(
        'RESERVE',
        unit,
        { qty: unit.qtyBase, reserved: unit.reservedBase },
        { qty: unit.qtyBase, reserved: after.reservedBase },
        { from: place, to: place, reservationId },
      );
    }),
    events,
    actor,
  );

  const byLoadUnit = new Map<number, { unit: CandidateUnit; amount: Dec }>();
  for (const { unit, amount } of takes) {
    const entry = byLoadUnit.get(unit.loadUnitId);
    byLoadUnit.set(unit.loadUnitId, { unit: entry?.unit ?? unit, amount: (entry?.amount ?? new Dec(0)).plus(amount) });
  }
  return [...byLoadUnit.values()].map(({ unit, amount }) => ({
    transportUnitBK: unit.transportUnitBK,
    loadUnitPosition: unit.loadUnitPosition,
    sku: request.sku,
    actualErpCode: unit.erpCode,
    qtyAllocated: expressed(amount, request.qty, product.baseUnitCode),
    reservationId,
  }));
}
