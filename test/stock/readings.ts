import type { Tx } from '../../src/db/tx.js';
import { selectStockByPlace, selectStockLevel, selectStockPage } from '../../src/stock/sql.js';

/** A reading of the current stock of one SKU, as each read of `GET /v1/stock` makes it. */
export type StockReading = (tx: Tx, sku: string) => Promise<unknown>;

/** Every reading of a Product's current figures, by name, for tests of what each one reads. */
export const CURRENT_STOCK_READINGS: [string, StockReading][] = [
  ['the Product’s level', (tx, sku) => selectStockLevel(tx, sku)],
  ['by LocationGroup', (tx, sku) => selectStockByPlace(tx, sku, 'locationGroup', null)],
  ['by Location', (tx, sku) => selectStockByPlace(tx, sku, 'location', null)],
  ['summed over its units', (tx, sku) => selectStockByPlace(tx, sku, 'none', null)],
  // A page of one row that starts right before the SKU (its last character dropped) and so holds just it.
  ['a page of Products', (tx, sku) => selectStockPage(tx, { limit: 0, afterSku: sku.slice(0, -1) })],
];
