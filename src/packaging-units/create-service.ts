import type { Tx } from '../db/tx.js';
import { jsonTextOrNull } from '../json.js';
import { appendMovementsAndEvents, type Actor } from '../ledger/sql.js';
import { admitProduct, findOrCreateLoadUnit } from '../load-units/service.js';
import type { LocationRow } from '../master-data/location-sql.js';
import { requireLocation } from '../master-data/service.js';
import { requireProductKind, requireProductReferences } from '../products/service.js';
import type { ProductReference } from '../products/sql.js';
import type { NewPackagingUnit, NewPackagingUnitOnLocation } from './schemas.js';
import { insertUnits, type PackagingUnitValues } from './write-sql.js';
import { StockChanges } from './stock-changes.js';
import { movement } from './stock.js';

/** D2: a unit's quantity measures what its Product measures. */
function checkKinds(
  items: readonly NewPackagingUnit[],
  products: ReadonlyMap<string, ProductReference>,
  path: (i: number) => string,
): void {
  items.forEach((item, index) =>
    requireProductKind(item.quantity, products.get(item.product.sku)?.baseUnitCode ?? '', `${path(index)}quantity`),
  );
}

/** The Products the new units are of (404 for an unknown SKU), their kinds checked against the quantities. */
async function productsOf(
  tx: Tx,
  items: readonly NewPackagingUnit[],
  path: (index: number) => string,
): Promise<Map<string, ProductReference>> {
  const products = await requireProductReferences(
    tx,
    items.map((item) => item.product.sku),
  );
  checkKinds(items, products, path);
  return products;
}

/** What a new unit stores of what the client sent, besides its Product and holder. */
export type SentUnitFields = Omit<
  PackagingUnitValues,
  'productId' | 'loadUnitId' | 'locationId' | 'parentId' | 'state' | 'messageNo' | 'messageText'
>;

export function sentUnitFields(item: NewPackagingUnit): SentUnitFields {
  return {
    qtyMagnitude: item.quantity.magnitude.toString(),
    qtyCode: item.quantity.unitCode,
    dimension: jsonTextOrNull(item.dimension),
    weightMagnitude: item.weight?.magnitude.toString() ?? null,
    weightCode: item.weight?.unitCode ?? null,
    distribution: jsonTextOrNull(item.distribution),
    physicalPosition: item.physicalPosition ?? null,
    serialNumber: item.serialNumber ?? null,
    expiresAt: item.expiresAt ?? null,
    labels: jsonTextOrNull(item.labels),
    details: jsonTextOrNull(item.details),
  };
}

function unitValues(
  item: NewPackagingUnit,
  productId: number,
  holder: { loadUnitId: number | null; locationId: number | null },
): PackagingUnitValues {
  return {
    productId,
    ...sentUnitFields(item),
    ...holder,
    parentId: null,
    state: 'AVAILABLE',
    messageNo: null,
    messageText: null,
  };
}

/** Inserts the units with their ledger rows and appends the operation's events, the new units' last (D27). */
async function insertWithLedger(
  tx: Tx,
  items: readonly {
    item: NewPackagingUnit;
    values: PackagingUnitValues;
    to: { locationId: string } | { transportUnitBK: string; loadUnitPosition: string };
  }[],
  actor: Actor,
  changes: StockChanges,
): Promise<number[]> {
  const inserted = await insertUnits(
    tx,
    items.map((entry) => entry.values),
  );
  for (const row of inserted) changes.unit('pu.event.created', row.id);
  await appendMovementsAndEvents(
    tx,
    inserted.map((row, index) => {
      const entry = items[index]!;
      const qty = entry.item.quantity.inSmallestUnit().toString();
      return movement(
        'CREATE',
        { pKey: row.pKey, productId: entry.values.productId, qtyCode: entry.values.qtyCode },
        { qty: '0', reserved: '0' },
        { qty, reserved: '0' },
        { to: entry.to },
      );
    }),
    await changes.events(tx),
    actor,
  );
  return inserted.map((row) => row.id);
}

const referenceKey = (ref: { locationId?: string | null; erpCode?: string | null }): string =>
  ref.locationId ? `id:${ref.locationId}` : `erp:${ref.erpCode ?? ''}`;

export interface LoadUnitTarget {
  readonly transportUnitBK: string;
  readonly luPos: string;
  readonly loadUnitType?: string;
}

/** packaging-units-create: into a LoadUnit, created on the spot when missing (spec part 3, D17, D18). */
export async function createInLoadUnit(
  tx: Tx,
  target: LoadUnitTarget,
  items: readonly NewPackagingUnit[],
  actor: Actor,
  mixedAllowed: boolean,
  path: (index: number) => string,
): Promise<number[]> {
  const products = await productsOf(tx, items, path);
  const { loadUnit, created } = await findOrCreateLoadUnit(tx, {
    transportUnitBK: target.transportUnitBK,
    position: target.luPos,
    loadUnitType: target.loadUnitType,
  });
  const changes = new StockChanges();
  if (created) changes.loadUnit('lu.event.created', loadUnit.id);
  for (const product of products.values()) {
    if (await admitProduct(tx, loadUnit, product, mixedAllowed)) changes.loadUnit('lu.event.changed', loadUnit.id);
  }
  const place = { transportUnitBK: loadUnit.transportUnitBK, loadUnitPosition: loadUnit.physicalPosition };
  return insertWithLedger(
    tx,
    items.map((item) => ({
      item,
      values: unitValues(item, products.get(item.product.sku)!.id, { loadUnitId: loadUnit.id, locationId: null }),
      to: place,
    })),
    actor,
    changes,
  );
}

/** packaging-units-createonlocation: units lying directly on Locations (D18). */
export async function createOnLocations(
  tx: Tx,
  items: readonly NewPackagingUnitOnLocation[],
  actor: Actor,
  path: (index: number) => string,
): Promise<number[]> {
  const products = await productsOf(tx, items, path);
  // Each distinct Location is looked up once, however many units go onto it.
  const locations = new Map<string, LocationRow>();
  for (const { actualLocation } of items) {
    const reference = referenceKey(actualLocation);
    if (!locations.has(reference)) locations.set(reference, await requireLocation(tx, actualLocation));
  }
  const entries = items.map((item) => {
    const location = locations.get(referenceKey(item.actualLocation))!;
    return {
      item,
      values: unitValues(item, products.get(item.product.sku)!.id, { loadUnitId: null, locationId: location.id }),
      to: { locationId: location.locationId },
    };
  });
  return insertWithLedger(tx, entries, actor, new StockChanges());
}
