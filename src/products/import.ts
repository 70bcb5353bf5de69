import { copyLines } from '../db/copy.js';
import { allowLongStatements, type Tx } from '../db/tx.js';
import { validationError } from '../http/api-error.js';
import type { BodyLine } from '../http/body.js';
import { parseLineInput, parseLineObject } from '../http/ndjson-line.js';
import { appendImportedProductEvents } from './events.js';
import {
  analyzeImportTable,
  conflictingImportedSkus,
  COPY_INTO_IMPORT_TABLE,
  createImportTable,
  importedRulesToStore,
  importOutcomes,
  importRowOfProduct,
  importRowOfRule,
  importRowOfUnit,
  insertImportedProducts,
  insertImportedRules,
  insertImportedUnits,
  insertNewImportedProducts,
  lockStoredImportedProducts,
  markChangedImportedProducts,
  type OnConflict,
  unknownStackedProducts,
  updateChangedImportedProducts,
} from './import-sql.js';
import { productErrors } from './messages.js';
import { productCreateSchema, type ProductInput } from './schemas.js';
import { productValues, ruleValues, unitValues } from './service.js';
import { isSkuTaken } from './sql.js';

/** An import of millions could name millions of problems; its 400 and 409 name the first ones. */
export const MAX_REPORTED = 100;

/**
 * One NDJSON line as a Product, with the checks a JSON body gets (malformed JSON, lone surrogates, repeated keys,
 * the schema); every problem names the line.
 */
export function parseProductLine(line: BodyLine): ProductInput {
  return parseLineInput(productCreateSchema, parseLineObject(line, 'a Product object'), line);
}

export interface ImportOptions {
  readonly requestId: string;
  /** How long the import's statements may take, the upload included (the HTTP request's own bound). */
  readonly timeoutMs: number;
  readonly onConflict: OnConflict;
}

/** What an import did (D35): Products created, left as they were (stored already, or unchanged), and updated. */
export interface ImportResult {
  readonly created: number;
  readonly skipped: number;
  readonly updated: number;
  /** The pKey when exactly one Product was sent and created (for its Location, D8). */
  readonly pKey?: string;
}

/**
 * Copies the products of the lines into the staging table as the lines arrive; the first invalid line ends the
 * COPY (CopyFail) and the request. Answers how many products and how many stacking rules were sent.
 */
async function copyProductLines(tx: Tx, lines: AsyncIterable<BodyLine>, timeoutMs: number): Promise<[number, number]> {
  let products = 0;
  let rules = 0;
  await copyLines(tx, COPY_INTO_IMPORT_TABLE, timeoutMs, lines, (line) => {
    const product = parseProductLine(line);
    products++;
    let rows = importRowOfProduct(line.number, productValues(product));
    for (const unit of unitValues(product)) rows += importRowOfUnit(line.number, unit);
    for (const rule of ruleValues(product)) {
      rules++;
      rows += importRowOfRule(line.number, rule);
    }
    return rows;
  });
  return [products, rules];
}

/** The SKUs sent twice (and with `fail`, those stored already): D10's 409, storing nothing. */
async function refuseConflicts(tx: Tx, onConflict: OnConflict, limit: number | null): Promise<never> {
  const conflicting = await conflictingImportedSkus(tx, limit, onConflict === 'fail');
  throw productErrors.alreadyExists(conflicting);
}

/** Stores the staged Products as `onConflict` says; answers how many were created and updated. */
async function storeImported(
  tx: Tx,
  products: number,
  onConflict: OnConflict,
  reportLimit: number | null,
): Promise<{ created: number; updated: number }> {
  await tx.query('SAVEPOINT import_products');
  try {
    if (onConflict === 'fail') {
      await insertImportedProducts(tx);
      return { created: products, updated: 0 };
    }
    // Autovacuum never analyzes a temporary table: without its statistics the comparisons below with the stored
    // Products would be planned as nested loops over the whole staging table.
    await analyzeImportTable(tx);
    // A SKU sent twice would be created or updated twice: refused in every mode.
    if ((await conflictingImportedSkus(tx, 1, false)).length > 0) {
      return await refuseConflicts(tx, onConflict, reportLimit);
    }
    await lockStoredImportedProducts(tx, onConflict);
    await insertNewImportedProducts(tx);
    if (onConflict === 'update') {
      await markChangedImportedProducts(tx);
      await updateChangedImportedProducts(tx);
    }
    return await importOutcomes(tx);
  } catch (error) {
    if (!isSkuTaken(error)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT import_products');
    return refuseConflicts(tx, onConflict, reportLimit);
  }
}

/**
 * D10 for a streamed body (issue 14): the same validation, all or nothing in the caller's transaction, the same
 * 400 for an unknown stacked product and 409 for a SKU sent twice (or, with `fail`, stored already), each naming at
 * most MAX_REPORTED, and D27's events in line order: `product.event.created` per Product created and (D35, `update`)
 * `product.event.updated` per stored Product its line changed. The body is never held: lines go through COPY into a
 * staging table, which set-based statements then check and insert from.
 */
export async function importProducts(
  tx: Tx,
  lines: AsyncIterable<BodyLine>,
  { requestId, timeoutMs, onConflict }: ImportOptions,
): Promise<ImportResult> {
  await allowLongStatements(tx, timeoutMs);
  await createImportTable(tx, onConflict);
  const [products, rules] = await copyProductLines(tx, lines, timeoutMs);
  if (products === 0) throw validationError([{ path: 'body', message: 'must contain at least one Product' }]);
  return storeStagedProducts(
    tx,
    { products, rules },
    { requestId, onConflict },
    { limit: MAX_REPORTED, pathOf: (line) => `line ${line}: ` },
  );
}

/** How the 400 and 409 of staged Products name them: at most `limit` (all when null), each where it was sent. */
export interface StagedReport {
  readonly limit: number | null;
  /** What a path is prefixed with for the Product of a staging row's `line`: `line 3: `, `[3].`. */
  readonly pathOf: (line: number) => string;
}

/**
 * D10 and D35 over the Products staged in product_import: the 400 for an unknown stacked product, the 409 for a SKU
 * sent twice (or, with `fail`, stored already), then set-based inserts (and updates) in line order and D27's events.
 */
export async function storeStagedProducts(
  tx: Tx,
  { products, rules }: { readonly products: number; readonly rules: number },
  { requestId, onConflict }: Pick<ImportOptions, 'requestId' | 'onConflict'>,
  report: StagedReport,
): Promise<ImportResult> {
  if (rules > 0) {
    const unknown = await unknownStackedProducts(tx, report.limit);
    if (unknown.length > 0) {
      throw productErrors.unknownStackedProducts(
        unknown.map(({ line, position, sku }) => ({
          path: `${report.pathOf(line)}stackingRules[${position}].allowedProduct.sku`,
          sku,
        })),
      );
    }
  }
  const { created, updated } = await storeImported(tx, products, onConflict, report.limit);
  await insertImportedUnits(tx);
  const rulesToStore = rules > 0 && onConflict !== 'fail' ? await importedRulesToStore(tx) : rules;
  if (rulesToStore > 0 && (await insertImportedRules(tx)) !== rulesToStore) {
    throw new Error('a stacking rule names a product that does not exist');
  }
  const pKey = await appendImportedProductEvents(tx, created + updated, requestId);
  return {
    created,
    skipped: products - created - updated,
    updated,
    pKey: products === 1 && created === 1 ? pKey : undefined,
  };
}
