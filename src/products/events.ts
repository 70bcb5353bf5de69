import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
import { selectProductsBySkus, type ProductRow } from './sql.js';
import { productView } from './view.js';

// Bounds one re-read's result: a bulk of 100,000 Products is read back in 20 statements.
const SKUS_PER_READ = 5_000;

/** A Product's event: the Product as GET renders it in plain JSON (D27). */
export function productEvent(type: 'product.event.created' | 'product.event.updated', product: ProductRow): NewEvent {
  return { type, key: product.pKey, resource: productView(product) };
}

/** D27: a bulk create of n Products is n events, in request order, read back in the creating transaction. */
export async function createdProductEvents(db: Queryable, skus: readonly string[]): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  for (let start = 0; start < skus.length; start += SKUS_PER_READ) {
    const chunk = skus.slice(start, start + SKUS_PER_READ);
    const bySku = new Map((await selectProductsBySkus(db, chunk)).map((product) => [product.sku, product]));
    for (const sku of chunk) {
      const product = bySku.get(sku);
      if (!product) throw new Error(`Product [${sku}] not found right after it was inserted`);
      events.push(productEvent('product.event.created', product));
    }
  }
  return events;
}

/** A deleted Product has no GET any more: its event names it by pKey and SKU. */
export function deletedProductEvent(product: { pKey: string; sku: string }): NewEvent {
  return { type: 'product.event.deleted', key: product.pKey, resource: { pKey: product.pKey, sku: product.sku } };
}
