import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
import { selectLoadUnitsByIds, selectProductSummaries } from './sql.js';
import { loadUnitView } from './view.js';

export type LoadUnitEventType = 'lu.event.created' | 'lu.event.changed';

/** A LoadUnit an operation created or changed, by internal id. */
export interface LoadUnitChange {
  readonly type: LoadUnitEventType;
  readonly id: number;
}

/**
 * D27: the events of the LoadUnits in the order given, each the LoadUnit with its Product as GET renders it in
 * plain JSON, read back in the changing transaction (one statement for the LoadUnits, one for their Products).
 */
export async function loadUnitEvents(db: Queryable, changes: readonly LoadUnitChange[]): Promise<NewEvent[]> {
  if (changes.length === 0) return [];
  const loadUnits = new Map(
    (await selectLoadUnitsByIds(db, [...new Set(changes.map((change) => change.id))])).map((row) => [row.id, row]),
  );
  const productIds = [...loadUnits.values()].flatMap((row) => (row.productId === null ? [] : [row.productId]));
  const products = new Map(
    productIds.length === 0
      ? []
      : (await selectProductSummaries(db, [...new Set(productIds)])).map((product) => [product.id, product]),
  );
  return changes.map((change) => {
    const row = loadUnits.get(change.id);
    if (!row) throw new Error(`LoadUnit ${change.id} not found right after it changed`);
    const product = row.productId === null ? undefined : products.get(row.productId);
    return { type: change.type, key: row.pKey, resource: loadUnitView(row, product) };
  });
}
