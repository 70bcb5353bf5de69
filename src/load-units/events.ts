import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
import { selectLoadUnitsByIds, selectProductSummaries, type LoadUnitRow, type ProductSummaryRow } from './sql.js';
import { loadUnitView } from './view.js';

export type LoadUnitEventType = 'lu.event.created' | 'lu.event.changed';

/** A LoadUnit an operation created or changed, by internal id. */
export interface LoadUnitChange {
  readonly type: LoadUnitEventType;
  readonly id: number;
}

/** A LoadUnit with its Product as the statement that changed it last answered them. */
export interface AnsweredLoadUnit {
  readonly loadUnit: LoadUnitRow;
  readonly product: ProductSummaryRow | undefined;
}

/**
 * D27: the events of the LoadUnits in the order given, each the LoadUnit with its Product as GET renders it in
 * plain JSON, read back in the changing transaction (one statement for the LoadUnits, one for their Products),
 * but for those in `answered`.
 */
export async function loadUnitEvents(
  db: Queryable,
  changes: readonly LoadUnitChange[],
  answered: ReadonlyMap<number, AnsweredLoadUnit> = new Map(),
): Promise<NewEvent[]> {
  if (changes.length === 0) return [];
  const ids = [...new Set(changes.flatMap((change) => (answered.has(change.id) ? [] : [change.id])))];
  const loadUnits = new Map((ids.length === 0 ? [] : await selectLoadUnitsByIds(db, ids)).map((row) => [row.id, row]));
  const productIds = [...loadUnits.values()].flatMap((row) => (row.productId === null ? [] : [row.productId]));
  const products = new Map(
    productIds.length === 0
      ? []
      : (await selectProductSummaries(db, [...new Set(productIds)])).map((product) => [product.id, product]),
  );
  return changes.map((change) => {
    const known = answered.get(change.id);
    if (known)
      return { type: change.type, key: known.loadUnit.pKey, resource: loadUnitView(known.loadUnit, known.product) };
    const row = loadUnits.get(change.id);
    if (!row) throw new Error(`LoadUnit ${change.id} not found right after it changed`);
    const product = row.productId === null ? undefined : products.get(row.productId);
    return { type: change.type, key: row.pKey, resource: loadUnitView(row, product) };
  });
}
