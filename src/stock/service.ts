import { setTimeout as delay } from 'node:timers/promises';
import { pageOf, type Page } from '../http/pagination.js';
import type pg from 'pg';
import { withTransaction, type Queryable } from '../db/tx.js';
import { ServerError } from '../http/server-error.js';
import { locationGroupIdsWithChildren } from '../master-data/service.js';
import { productErrors } from '../products/messages.js';
import { Dec } from '../units/decimal.js';
import { FEED_BEHIND, stockErrors } from './messages.js';
import { stockCursorOf, type StockQuery } from './schemas.js';
import {
  selectBoundary,
  selectNewestBoundaryPosition,
  selectStockAt,
  selectStockByPlace,
  selectStockLevel,
  selectStockPage,
  selectStockPageAsOf,
  recordBoundaryAtHead,
  type BoundaryCheck,
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
  /** D40: the cursor of the last event the figures include. */
  readonly feedCursor: number;
  readonly rows?: { readonly by: 'locationGroup' | 'location'; readonly items: readonly StockRow[] };
}

const LIST_ONLY = ['limit', 'after', 'asOf'] as const;

/** A list item: `available` is left out of a page read as of an earlier feedCursor. */
export type ListedStock = Omit<ProductStock, 'available'> & { available?: string; feedCursor: number };

// A reading waits this long, at most this often, for the feed to number a change its figures already hold (D40).
const BOUNDARY_WAIT_MS = 10;
const BOUNDARY_TRIES = 300;
// After this many tries the change is taken for one that wrote no event, and the reading records a boundary.
const TRIES_BEFORE_RECORDING = 20;
const PRODUCT_ONLY = ['sourceLocationGroupNames', 'by', 'at'] as const;

/** Which parameters go together (D31): a list page, or one Product's reading; `at` has no places. */
function checkCombination(query: StockQuery): void {
  const given = (name: keyof StockQuery): boolean => query[name] !== undefined;
  if (given('at') && given('asOf')) throw stockErrors.notWithAsOf();
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
  if (past.feedCursor === null) throw stockErrors.historyExpired(at, at);
  const { keptSince, feedCursor, ...figures } = past;
  return { ...figures, asOf: new Date(at), feedCursor };
}

/**
 * D40: reads until the figures stand on a commit boundary, that is until every change they hold is numbered in
 * the feed, so that `feedCursor` names the last event they include. A change committed a moment ago is numbered
 * within milliseconds; a reading that never gets there (numbering down) is a 503.
 */
async function onBoundary<T>(pool: pg.Pool, read: () => Promise<T>, changed: (reading: T) => boolean): Promise<T> {
  for (let tries = 1; ; tries++) {
    const reading = await read();
    if (!changed(reading)) return reading;
    if (tries === BOUNDARY_TRIES) throw stockErrors.feedBehind();
    if (tries % TRIES_BEFORE_RECORDING === 0) await withTransaction(pool, recordBoundaryAtHead);
    else await delay(BOUNDARY_WAIT_MS);
  }
}

const changedSince = (reading: BoundaryCheck | undefined): boolean => reading?.changedSince === true;

/**
 * D31: one Product's onHand, reserved and available from one snapshot. The plain reading comes from the kept
 * per-Product sums; stock in some LocationGroups and rows by place are summed over the units, the totals then
 * being the sums of the rows.
 */
export async function readStockLevel(db: pg.Pool, query: StockQuery & { sku: string }): Promise<StockLevel> {
  checkCombination(query);
  if (query.at !== undefined) return stockAt(db, query.sku, query.at);
  const groupIds = await groupIdsOf(db, query.sourceLocationGroupNames);
  if (groupIds === null && query.by === undefined) {
    const reading = await onBoundary(db, () => selectStockLevel(db, query.sku), changedSince);
    if (!reading) throw productErrors.notFoundBySku(query.sku);
    const { changedSince: _numbered, ...level } = reading;
    return level;
  }
  const found = await onBoundary(
    db,
    () => selectStockByPlace(db, query.sku, query.by ?? 'none', groupIds),
    (reading) => changedSince(reading?.product),
  );
  if (!found) throw productErrors.notFoundBySku(query.sku);
  const { product, rows } = found;
  return {
    sku: product.sku,
    baseUnitCode: product.baseUnitCode,
    onHand: sum(rows, 'onHand'),
    reserved: sum(rows, 'reserved'),
    available: sum(rows, 'available'),
    asOf: product.asOf,
    feedCursor: product.feedCursor,
    ...(query.by ? { rows: { by: query.by, items: rows } } : {}),
  };
}

/**
 * D31: every Product's figures in SKU order, zeros included, a page at a time; `next` is the opaque cursor. With
 * `asOf` (D40) the page is read as of that feedCursor, so every page of one walk is the same snapshot.
 */
export async function listStockLevels(db: pg.Pool, query: StockQuery, limit: number): Promise<Page<ListedStock>> {
  checkCombination(query);
  const cursorOf = (row: ListedStock): string => stockCursorOf(row.sku);
  if (query.asOf !== undefined) {
    const boundary = await selectBoundary(db, query.asOf);
    if (!boundary.found) {
      throw boundary.expired ? stockErrors.asOfExpired(query.asOf) : stockErrors.notABoundary(query.asOf);
    }
    if (boundary.keptSince !== null && boundary.committedAt < boundary.keptSince) {
      throw stockErrors.asOfExpired(query.asOf);
    }
    const rows = await selectStockPageAsOf(db, { limit, afterSku: query.after, position: query.asOf });
    return pageOf(rows, limit, cursorOf);
  }
  try {
    const rows = await onBoundary(
      db,
      () => selectStockPage(db, { limit, afterSku: query.after }),
      (page) => page.some(changedSince),
    );
    return pageOf(
      rows.map(({ changedSince: _numbered, ...row }) => row),
      limit,
      cursorOf,
    );
  } catch (error) {
    // D40: while the feed is behind, the page as of the newest boundary, as an `asOf` page reads it (without
    // `available`, which is no sum of ledger rows): figures and feedCursor agree, so snapshot plus feed still holds.
    if (!(error instanceof ServerError && error.exception === FEED_BEHIND)) throw error;
    const position = await selectNewestBoundaryPosition(db);
    if (position === null) throw error;
    return pageOf(await selectStockPageAsOf(db, { limit, afterSku: query.after, position }), limit, cursorOf);
  }
}
