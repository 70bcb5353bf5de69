import { pageOf, type Page } from '../http/pagination.js';
import type { Queryable } from '../db/tx.js';
import { locationGroupIdsWithChildren } from '../master-data/service.js';
import { productErrors } from '../products/messages.js';
import { Dec } from '../units/decimal.js';
import { stockErrors } from './messages.js';
import { stockCursorOf, type StockQuery } from './schemas.js';
import {
  selectStockAt,
  selectStockByPlace,
  selectStockLevel,
  selectStockPage,
  type ProductStock,
  type StockRow,
} from './sql.js';

/** One Product's figures (D31); amounts in the kind's smallest unit, `available` absent for a past instant. */
export interface StockLevel {
  readonly sku: string;
  readonly baseUnitCode: string;
  readonly onHand: string;
  readonly reserved: string;
  readonly available?: string;
  readonly asOf: Date;
  readonly rows?: { readonly by: 'locationGroup' | 'location'; readonly items: readonly StockRow[] };
}

const LIST_ONLY = ['limit', 'after'] as const;
const PRODUCT_ONLY = ['sourceLocationGroupNames', 'by', 'at'] as const;

/** Which parameters go together (D31): a list page, or one Product's reading; `at` has no places. */
function checkCombination(query: StockQuery): void {
  const given = (name: keyof StockQuery): boolean => query[name] !== undefined;
  if (query.sku === undefined) {
    const misplaced = PRODUCT_ONLY.find(given);
    if (misplaced) throw stockErrors.onlyWithSku(misplaced);
    return;
  }
  const misplaced = LIST_ONLY.find(given);
  if (misplaced) throw stockErrors.onlyForTheList(misplaced);
  if (query.at !== undefined) {
    const withAt = (['sourceLocationGroupNames', 'by'] as const).find(given);
    if (withAt) throw stockErrors.notWithAt(withAt);
  }
}

/** The groups and their children, as allocation reads them; a name that is no group is the parameter's fault. */
async function groupIdsOf(db: Queryable, names: readonly string[] | undefined): Promise<number[] | null> {
  return names?.length ? locationGroupIdsWithChildren(db, names, stockErrors.unknownGroup) : null;
}

function sum(rows: readonly StockRow[], figure: 'onHand' | 'reserved' | 'available'): string {
  return rows.reduce((total, row) => total.plus(row[figure]), new Dec(0)).toString();
}

async function stockAt(db: Queryable, sku: string, at: string): Promise<StockLevel> {
  if (Date.parse(at) > Date.now()) throw stockErrors.futureInstant(at);
  const past = await selectStockAt(db, sku, at);
  if (!past) throw productErrors.notFoundBySku(sku);
  if (past.keptSince !== null && Date.parse(at) < past.keptSince.getTime()) {
    throw stockErrors.historyExpired(at, past.keptSince.toISOString());
  }
  const { keptSince, ...figures } = past;
  return { ...figures, asOf: new Date(at) };
}

/**
 * D31: one Product's onHand, reserved and available from one snapshot. The plain reading comes from the kept
 * per-Product sums; stock in some LocationGroups and rows by place are summed over the units, the totals then
 * being the sums of the rows.
 */
export async function readStockLevel(db: Queryable, query: StockQuery & { sku: string }): Promise<StockLevel> {
  checkCombination(query);
  if (query.at !== undefined) return stockAt(db, query.sku, query.at);
  const groupIds = await groupIdsOf(db, query.sourceLocationGroupNames);
  if (groupIds === null && query.by === undefined) {
    const reading = await selectStockLevel(db, query.sku);
    if (!reading) throw productErrors.notFoundBySku(query.sku);
    return reading;
  }
  const found = await selectStockByPlace(db, query.sku, query.by ?? 'none', groupIds);
  if (!found) throw productErrors.notFoundBySku(query.sku);
  const { product, rows } = found;
  return {
    sku: product.sku,
    baseUnitCode: product.baseUnitCode,
    onHand: sum(rows, 'onHand'),
    reserved: sum(rows, 'reserved'),
    available: sum(rows, 'available'),
    asOf: product.asOf,
    ...(query.by ? { rows: { by: query.by, items: rows } } : {}),
  };
}

/** D31: every Product's figures in SKU order, zeros included, a page at a time; `next` is the opaque cursor. */
export async function listStockLevels(db: Queryable, query: StockQuery, limit: number): Promise<Page<ProductStock>> {
  checkCombination(query);
  const rows = await selectStockPage(db, { limit, afterSku: query.after });
  return pageOf(rows, limit, (row) => stockCursorOf(row.sku));
}
