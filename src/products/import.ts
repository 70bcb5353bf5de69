import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Tx } from '../db/tx.js';
import { validationError } from '../http/api-error.js';
import { unreadableBody } from '../http/server-error.js';
import { isJsonObject, parseInput } from '../http/validate.js';
import { escapesLoneSurrogate, firstRepeatedKey, parseJson } from '../json.js';
import { appendImportedProductEvents } from './events.js';
import {
  conflictingImportedSkus,
  copyIntoImportTable,
  createImportTable,
  importRowOfProduct,
  importRowOfRule,
  importRowOfUnit,
  insertImportedProducts,
  insertImportedRules,
  insertImportedUnits,
  unknownStackedProducts,
} from './import-sql.js';
import { productErrors } from './messages.js';
import { productCreateSchema, type ProductInput } from './schemas.js';
import { productValues, ruleValues, unitValues } from './service.js';
import { isSkuTaken } from './sql.js';

/** One line of an NDJSON body: its number (from 1) and its text. */
export interface ImportLine {
  readonly number: number;
  readonly text: string;
}

/** COPY rows are handed over in pieces of about this many characters, not one small message per row. */
const COPY_PIECE_CHARS = 256 * 1024;
/** An import of millions could name millions of problems; its 400 and 409 name the first ones. */
export const MAX_REPORTED = 100;

/**
 * One NDJSON line as a Product, with the checks a JSON body gets (malformed JSON, lone surrogates, repeated keys,
 * the schema); every problem names the line. A blank line is no Product (undefined).
 */
export function parseProductLine(line: ImportLine): ProductInput | undefined {
  if (line.text.trim() === '') return undefined;
  const where = `line ${line.number}`;
  let parsed: unknown;
  try {
    parsed = parseJson(line.text);
  } catch (error) {
    throw unreadableBody(`${where}: malformed JSON (${(error as Error).message})`);
  }
  if (escapesLoneSurrogate(line.text, parsed)) {
    throw unreadableBody(`${where}: a string holds a lone UTF-16 surrogate, which is no character`);
  }
  const repeatedKey = firstRepeatedKey(line.text);
  if (repeatedKey !== undefined) {
    throw unreadableBody(`${where}: an object names the key ${JSON.stringify(repeatedKey)} more than once`);
  }
  if (!isJsonObject(parsed)) throw validationError([{ path: where, message: 'must be a Product object' }]);
  return parseInput(productCreateSchema, parsed, where, `${where}: `);
}

export interface ImportOptions {
  readonly requestId: string;
  /** How long the import's statements may take, the upload included (the HTTP request's own bound). */
  readonly timeoutMs: number;
}

/**
 * Copies the products of the lines into the staging table as the lines arrive; the first invalid line ends the
 * COPY (CopyFail) and the request. Answers how many products and how many stacking rules were sent.
 */
async function copyLines(tx: Tx, lines: AsyncIterable<ImportLine>, timeoutMs: number): Promise<[number, number]> {
  const copy = tx.query(copyIntoImportTable(timeoutMs));
  // An error of the COPY itself surfaces through `drain` or `finished`; unheard, the event would end the process.
  copy.on('error', () => undefined);
  let products = 0;
  let rules = 0;
  try {
    let piece = '';
    for await (const line of lines) {
      const product = parseProductLine(line);
      if (!product) continue;
      products++;
      piece += importRowOfProduct(line.number, productValues(product));
      for (const unit of unitValues(product)) piece += importRowOfUnit(line.number, unit);
      for (const rule of ruleValues(product)) {
        rules++;
        piece += importRowOfRule(line.number, rule);
      }
      if (piece.length >= COPY_PIECE_CHARS) {
        const flowing = copy.write(piece);
        piece = '';
        if (!flowing) await once(copy, 'drain');
      }
    }
    if (piece !== '') copy.write(piece);
    copy.end();
    await finished(copy);
  } catch (error) {
    // CopyFail: the server discards the rows, and the connection is ready for the ROLLBACK once it has answered.
    copy.destroy();
    await finished(copy).catch(() => undefined);
    throw error;
  }
  return [products, rules];
}

/**
 * D10 for a streamed body (issue 14): the same validation, all or nothing in the caller's transaction, the same
 * 400 for an unknown stacked product and 409 for a SKU sent twice or stored already (each naming at most
 * MAX_REPORTED), and D27's one `product.event.created` per product in line order. The body is never held: lines
 * go through COPY into a staging table, which set-based statements then check and insert from. Answers the pKey
 * when exactly one product was sent.
 */
export async function importProducts(
  tx: Tx,
  lines: AsyncIterable<ImportLine>,
  { requestId, timeoutMs }: ImportOptions,
): Promise<string | undefined> {
  await tx.query(`SELECT set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
  await createImportTable(tx);
  const [products, rules] = await copyLines(tx, lines, timeoutMs);
  if (products === 0) throw validationError([{ path: 'body', message: 'must contain at least one Product' }]);
  return storeStagedProducts(tx, { products, rules }, requestId, {
    limit: MAX_REPORTED,
    pathOf: (line) => `line ${line}: `,
  });
}

/** How the 400 and 409 of staged Products name them: at most `limit` (all when null), each where it was sent. */
export interface StagedReport {
  readonly limit: number | null;
  /** What a path is prefixed with for the Product of a staging row's `line`: `line 3: `, `[3].`. */
  readonly pathOf: (line: number) => string;
}

/**
 * D10 over the Products staged in product_import: the 400 for an unknown stacked product and the 409 for a SKU sent
 * twice or stored already, then set-based inserts in line order and D27's one `product.event.created` per product.
 * Answers the pKey when exactly one product was sent.
 */
export async function storeStagedProducts(
  tx: Tx,
  { products, rules }: { readonly products: number; readonly rules: number },
  requestId: string,
  report: StagedReport,
): Promise<string | undefined> {
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
  await tx.query('SAVEPOINT import_products');
  try {
    await insertImportedProducts(tx);
  } catch (error) {
    if (!isSkuTaken(error)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT import_products');
    const conflicting = await conflictingImportedSkus(tx, report.limit);
    throw conflicting.length > 0 ? productErrors.alreadyExists(conflicting) : error;
  }
  await insertImportedUnits(tx);
  if (rules > 0 && (await insertImportedRules(tx)) !== rules) {
    throw new Error('a stacking rule names a product that does not exist');
  }
  return appendImportedProductEvents(tx, products, requestId);
}
