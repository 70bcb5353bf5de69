import { asUuid } from '../db/keys.js';
import type { Queryable, Tx } from '../db/tx.js';
import { appendEvents } from '../events/outbox.js';
import type { ApiError } from '../http/api-error.js';
import { transportUnitBkMissing } from '../master-data/messages.js';
import { registerTransportUnit, requireTransportUnit } from '../master-data/service.js';
import { renderedUnitEvents } from '../packaging-units/events.js';
import { selectUnitsInLoadUnit } from '../packaging-units/sql.js';
import { findProductBySku, requireProductKind } from '../products/service.js';
import { loadUnitEvents } from './events.js';
import { loadUnitErrors } from './messages.js';
import type { DivideInput, PutProductIntoInput } from './schemas.js';
import * as sql from './sql.js';
import type { LoadUnitRow, ProductSummaryRow } from './sql.js';
import { pageOf, type Page, type PageQuery } from '../http/pagination.js';

export type { LoadUnitRow, ProductSummaryRow };

/** A LoadUnit with the (partial) Product assigned to it, ready for the view. */
export interface LoadUnitWithProduct {
  readonly loadUnit: LoadUnitRow;
  readonly product: ProductSummaryRow | undefined;
}

/** D33, D40: refuses (throws) a change whose If-Match does not name the LoadUnit as locked; none to check: undefined. */
export type LoadUnitCheck = ((current: LoadUnitWithProduct) => void) | undefined;

/** Locks the LoadUnit, then lets `check` see it as its representation shows it, before anything changes. */
async function lockChecked(tx: Tx, pKey: string, check: LoadUnitCheck): Promise<LoadUnitRow> {
  const loadUnit = await lockLoadUnitByPKey(tx, pKey);
  if (check) check((await withProducts(tx, [loadUnit]))[0]!);
  return loadUnit;
}

const isBlank = (value: string | undefined): boolean => value === undefined || value.trim() === '';

/** D16: positions "1" … "n". */
function positionsUpTo(parts: number): string[] {
  return Array.from({ length: parts }, (_, index) => String(index + 1));
}

/**
 * D16: divides a TransportUnit (registered on the spot, D15) into `parts` LoadUnits at positions "1" … "n".
 * One that already has two or more LoadUnits is refused; one that has a single LoadUnit keeps it and gets the
 * positions still missing. The TransportUnit row is locked before the LoadUnits are counted, so of two
 * concurrent divides the second sees the first one's LoadUnits. D27: one `lu.event.created` per new LoadUnit.
 */
export async function divideTransportUnit(tx: Tx, input: DivideInput, requestId: string): Promise<void> {
  const transportUnit = await registerTransportUnit(tx, input.transportUnitBK);
  await sql.lockTransportUnitRow(tx, transportUnit.id);
  const existing = await sql.selectPositionsOnTransportUnit(tx, transportUnit.id);
  if (existing.length >= 2) throw loadUnitErrors.alreadyDivided(input.transportUnitBK);
  const taken = new Set(existing);
  const missing = positionsUpTo(input.parts).filter((position) => !taken.has(position));
  const created = await sql.insertLoadUnits(tx, transportUnit.id, missing, input.loadUnitType);
  const events = await loadUnitEvents(
    tx,
    created.map((id) => ({ type: 'lu.event.created', id })),
  );
  await appendEvents(tx, events, requestId);
}

/** Locks (FOR UPDATE) and returns the LoadUnit at that TransportUnit position, or undefined. */
export async function lockLoadUnitAt(
  tx: Tx,
  transportUnitBK: string,
  position: string,
): Promise<LoadUnitRow | undefined> {
  return sql.lockLoadUnitAtPosition(tx, transportUnitBK, position);
}

/** Like lockLoadUnitAt, but 404 owms.wms.inv.lu.onTuNotExists, obj = [transportUnitBK, position], when missing. */
export async function requireLoadUnitAt(tx: Tx, transportUnitBK: string, position: string): Promise<LoadUnitRow> {
  const loadUnit = await sql.lockLoadUnitAtPosition(tx, transportUnitBK, position);
  if (!loadUnit) throw loadUnitErrors.notOnTransportUnit(transportUnitBK, position);
  return loadUnit;
}

/**
 * The LoadUnit at that position, created (TransportUnit registered on the spot, D15) when missing; 400
 * owms.wms.inv.pu.loadUnitTypeMissing, obj = [position, transportUnitBK], when it must be created and
 * loadUnitType is undefined or blank. Race-safe: the insert yields to a concurrent one (ON CONFLICT DO NOTHING)
 * and the row is then read under its lock. The insert's foreign-key check waits for a divide holding the
 * TransportUnit, so a divide never miscounts. Returned locked.
 */
export async function obtainLoadUnit(
  tx: Tx,
  target: { transportUnitBK: string; position: string; loadUnitType?: string },
): Promise<LoadUnitRow> {
  return (await findOrCreateLoadUnit(tx, target)).loadUnit;
}

/**
 * Why a missing LoadUnit at that position may not be created on the spot, in the order findOrCreateLoadUnit
 * checks: a blank position, then a missing type (400 loadUnitTypeMissing), then the TransportUnit's blank key;
 * undefined when it may.
 */
export function creationRefusal(target: {
  transportUnitBK: string;
  position: string;
  loadUnitType?: string;
}): ApiError | undefined {
  const { transportUnitBK, position, loadUnitType } = target;
  if (isBlank(position)) return loadUnitErrors.positionBlank();
  if (loadUnitType === undefined || isBlank(loadUnitType)) {
    return loadUnitErrors.loadUnitTypeMissing(position, transportUnitBK);
  }
  if (isBlank(transportUnitBK)) return transportUnitBkMissing();
  return undefined;
}

/** obtainLoadUnit, telling whether this transaction created the LoadUnit (its event is then `lu.event.created`). */
export async function findOrCreateLoadUnit(
  tx: Tx,
  target: { transportUnitBK: string; position: string; loadUnitType?: string },
): Promise<{ loadUnit: LoadUnitRow; created: boolean }> {
  const { transportUnitBK, position } = target;
  const existing = await sql.lockLoadUnitAtPosition(tx, transportUnitBK, position);
  if (existing) return { loadUnit: existing, created: false };
  const refusal = creationRefusal(target);
  if (refusal) throw refusal;
  const transportUnit = await registerTransportUnit(tx, transportUnitBK);
  const inserted = await sql.insertLoadUnits(tx, transportUnit.id, [position], target.loadUnitType!);
  const loadUnit = await sql.lockLoadUnitAtPosition(tx, transportUnitBK, position);
  if (!loadUnit) throw new Error(`LoadUnit ${transportUnitBK}/${position} neither inserted nor found`);
  return { loadUnit, created: inserted.length > 0 };
}

/** D17: refuses a Product other than the one the LoadUnit is assigned to or already carries. */
async function refuseOtherProduct(
  tx: Tx,
  loadUnit: LoadUnitRow,
  productId: number | null,
  product: { id: number; sku: string },
): Promise<void> {
  const assignedElsewhere = productId !== null && productId !== product.id;
  if (assignedElsewhere || (await sql.carriesOtherProduct(tx, loadUnit.id, product.id))) {
    throw loadUnitErrors.alreadyAssigned(loadUnit.pKey, product.sku);
  }
}

/**
 * D17 for a LoadUnit locked by the caller: throws the 400 alreadyAssigned unless mixed LoadUnits are allowed;
 * assigns the product when the LoadUnit has none. The stored assignment is what counts (not a possibly stale
 * `loadUnit.productId`), and the passed row follows the change (`productId`, `ol`). Answers whether it assigned
 * the product, which changes the LoadUnit's rendering.
 */
export async function admitProduct(
  tx: Tx,
  loadUnit: LoadUnitRow,
  product: { id: number; sku: string },
  mixedAllowed: boolean,
): Promise<boolean> {
  const current = await sql.lockLoadUnitByPKey(tx, loadUnit.pKey);
  if (!current) throw loadUnitErrors.notFoundByPKey(loadUnit.pKey);
  if (!mixedAllowed) await refuseOtherProduct(tx, loadUnit, current.productId, product);
  if (current.productId === null && (await sql.updateLoadUnitProduct(tx, loadUnit.id, product.id))) {
    loadUnit.productId = product.id;
    loadUnit.ol = current.ol + 1;
    return true;
  }
  return false;
}

/** 404 owms.wms.inv.lu.pKeyNotExists for an unknown or malformed key (D11: never a 400). */
export async function findLoadUnitByPKey(db: Queryable, pKey: string): Promise<LoadUnitRow> {
  const key = asUuid(pKey);
  const loadUnit = key ? await sql.selectLoadUnitByPKey(db, key) : undefined;
  if (!loadUnit) throw loadUnitErrors.notFoundByPKey(pKey);
  return loadUnit;
}

async function lockLoadUnitByPKey(tx: Tx, pKey: string): Promise<LoadUnitRow> {
  const key = asUuid(pKey);
  const loadUnit = key ? await sql.lockLoadUnitByPKey(tx, key) : undefined;
  if (!loadUnit) throw loadUnitErrors.notFoundByPKey(pKey);
  return loadUnit;
}

async function withProducts(db: Queryable, loadUnits: readonly LoadUnitRow[]): Promise<LoadUnitWithProduct[]> {
  const ids = [...new Set(loadUnits.flatMap((loadUnit) => (loadUnit.productId === null ? [] : [loadUnit.productId])))];
  const products = new Map(
    ids.length === 0 ? [] : (await sql.selectProductSummaries(db, ids)).map((product) => [product.id, product]),
  );
  return loadUnits.map((loadUnit) => ({
    loadUnit,
    product: loadUnit.productId === null ? undefined : products.get(loadUnit.productId),
  }));
}

/** lu-findbypkey: the LoadUnit with its Product. */
export async function getLoadUnit(db: Queryable, pKey: string): Promise<LoadUnitWithProduct> {
  const [found] = await withProducts(db, [await findLoadUnitByPKey(db, pKey)]);
  if (!found) throw loadUnitErrors.notFoundByPKey(pKey);
  return found;
}

/** D16: a page of the TransportUnit's LoadUnits by position; 404 owms.wms.inv.tu.bkNotExists for an unknown one. */
export async function listLoadUnitsOfTransportUnit(
  db: Queryable,
  transportUnitBK: string,
  query: PageQuery,
): Promise<Page<LoadUnitWithProduct>> {
  const transportUnit = await requireTransportUnit(db, transportUnitBK);
  const rows = await sql.selectLoadUnitsOfTransportUnit(db, transportUnit.id, {
    limit: query.limit + 1,
    after: query.after,
  });
  const page = pageOf(rows, query.limit, (row) => row.id);
  return { ...page, items: await withProducts(db, page.items) };
}

/**
 * lu-putproductinto: assigns the Product to the LoadUnit. The quantity must be of the Product's kind (D2);
 * D17 refuses another Product unless mixed LoadUnits are allowed, in which case the new assignment replaces
 * the old one. An assignment that changes nothing is no event.
 */
export async function putProductIntoLoadUnit(
  tx: Tx,
  pKey: string,
  input: PutProductIntoInput,
  mixedAllowed: boolean,
  requestId: string,
  check?: LoadUnitCheck,
): Promise<void> {
  const loadUnit = await lockChecked(tx, pKey, check);
  const product = await findProductBySku(tx, input.sku);
  requireProductKind(input.baseUnit, product.baseUnitCode, 'baseUnit');
  if (!mixedAllowed) await refuseOtherProduct(tx, loadUnit, loadUnit.productId, product);
  if (await sql.updateLoadUnitProduct(tx, loadUnit.id, product.id)) {
    await appendEvents(tx, await loadUnitEvents(tx, [{ type: 'lu.event.changed', id: loadUnit.id }]), requestId);
  }
}

/**
 * D16: locks a LoadUnit for allocation or releases it; `ol` rises only when `locked` changes. Its units embed
 * `locked`, so a change is an event of the LoadUnit and one of each unit in it.
 */
export async function changeLoadUnitLock(
  tx: Tx,
  pKey: string,
  locked: boolean,
  requestId: string,
  check?: LoadUnitCheck,
): Promise<LoadUnitWithProduct> {
  const loadUnit = await lockChecked(tx, pKey, check);
  const changed = await sql.updateLoadUnitLocked(tx, loadUnit.id, locked);
  if (changed) {
    // Read once after the change: the units render the LoadUnit's new `locked`.
    const units = await selectUnitsInLoadUnit(tx, loadUnit.id);
    const events = [
      ...(await loadUnitEvents(tx, [{ type: 'lu.event.changed', id: loadUnit.id }])),
      ...(await renderedUnitEvents(
        tx,
        units.map((unit) => ({ type: 'pu.event.changed' as const, unit })),
      )),
    ];
    await appendEvents(tx, events, requestId);
  }
  const [result] = await withProducts(tx, [changed ? { ...loadUnit, locked, ol: loadUnit.ol + 1 } : loadUnit]);
  if (!result) throw loadUnitErrors.notFoundByPKey(pKey);
  return result;
}
