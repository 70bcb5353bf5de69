import type { ByteSize } from '../config.js';
import { copySpool } from '../db/copy.js';
import type { Tx } from '../db/tx.js';
import type { ApiError } from '../http/api-error.js';
import { MAX_BULK_PROBLEMS, Slices } from '../http/json-bulk.js';
import { JsonElements, type JsonElement } from '../http/json-elements.js';
import { formatIssuePath, InputProblems, isJsonObject } from '../http/validate.js';
import {
  COPY_INTO_IMPORT_TABLE,
  createImportTable,
  importRowOfProduct,
  importRowOfRule,
  importRowOfUnit,
} from './import-sql.js';
import { storeStagedProducts } from './import.js';
import { RowSpool } from '../db/row-spool.js';
import { productCreateSchema, productListSchema } from './schemas.js';
import { productValues, ruleValues, unitValues } from './service.js';

/** Rows go to the spool in pieces of about this many characters. */
const SPOOL_PIECE_CHARS = 256 * 1024;

/** A JSON bulk body read, checked and staged as COPY rows; nothing is stored yet. */
export interface StagedProducts {
  readonly rows: RowSpool;
  readonly products: number;
  readonly rules: number;
  /** `[3].` before the paths of an element of an array body; nothing for a body of one object (D10). */
  readonly pathOf: (line: number) => string;
  /**
   * D6's 400 naming every problem of every Product, answered by the handler, where the check of a buffered body
   * answered it: after the Idempotency-Key is looked at.
   */
  readonly invalid: ApiError | undefined;
}

const bodyPath = (path: readonly PropertyKey[]): string => formatIssuePath(path) || 'body';

/**
 * Issue 26: a bulk body is parsed, checked and turned into COPY rows Product by Product as it arrives, in slices of
 * at most SLICE_MS between which the event loop serves other requests, however fast the body arrives. Only one piece
 * of text, the Products it completes and one spool piece of rows are held; the rows wait in a spool file. The answers
 * are those of the body read whole: problems of Products named by their path (`[3].baseUnit`), malformed JSON, a
 * lone surrogate or a repeated key a 400. A Product beyond `productLimit` (BODY_LIMIT) is a 413, as it is as an
 * NDJSON line or a PUT. Issue 39: once MAX_BULK_PROBLEMS problems are found the body is refused naming them, and its
 * rest is read off unparsed.
 */
export async function stageProducts(pieces: AsyncIterable<string>, productLimit: ByteSize): Promise<StagedProducts> {
  const elements = new JsonElements(productLimit);
  const problems = new InputProblems();
  const rows = await RowSpool.open();
  let pending = '';
  let products = 0;
  let rules = 0;
  let root: unknown;
  const stage = ({ index, value }: JsonElement): void => {
    if (index === undefined && !isJsonObject(value)) {
      root = value;
      return;
    }
    products++;
    const product = problems.check(productCreateSchema, value, index === undefined ? [] : [index]);
    // Once one Product is invalid nothing is stored: the others are only checked, for the 400 to name them all.
    if (!product || problems.found) return;
    const line = index ?? 0;
    pending += importRowOfProduct(line, productValues(product));
    for (const unit of unitValues(product)) pending += importRowOfUnit(line, unit);
    for (const rule of ruleValues(product)) {
      rules++;
      pending += importRowOfRule(line, rule);
    }
  };
  // Other requests are served between two slices, even when the body arrives faster than it is checked.
  const slices = new Slices();
  const refused = (): boolean => problems.count >= MAX_BULK_PROBLEMS;
  const stageAll = async (list: readonly JsonElement[]): Promise<void> => {
    for (const element of list) {
      stage(element);
      if (refused()) return;
      if (slices.due()) await slices.next();
    }
  };
  try {
    for await (const piece of pieces) {
      await stageAll(elements.write(piece));
      // Leaving the loop ends the body's reading: its rest is read off unkept (see readPieces).
      if (refused()) break;
      if (pending.length >= SPOOL_PIECE_CHARS) {
        await rows.write(pending);
        pending = '';
      }
      if (slices.due()) await slices.next();
    }
    if (!refused()) await stageAll(elements.end());
    if (pending !== '') await rows.write(pending);
  } catch (error) {
    await rows.close();
    throw error;
  }
  // An empty array, a body of no object or array, or none at all: the answers of the list's schema.
  if (products === 0) problems.check(productListSchema, elements.array ? [] : root);
  return {
    rows,
    products,
    rules,
    pathOf: elements.array ? (line) => `[${line}].` : () => '',
    invalid: problems.found ? problems.error(bodyPath) : undefined,
  };
}

/** D10 of a create without a body: the list's schema names it required. */
export function missingBody(): ApiError {
  const problems = new InputProblems();
  problems.check(productListSchema, undefined);
  return problems.error(bodyPath);
}

/**
 * D10 for a staged JSON bulk: its rows are copied into the import's staging table and stored by the import's
 * set-based statements, all or nothing; its 400 and 409 name every problem, as they always did.
 */
export async function createProducts(
  tx: Tx,
  staged: StagedProducts,
  { requestId, timeoutMs }: { readonly requestId: string; readonly timeoutMs: number },
): Promise<string | undefined> {
  await createImportTable(tx, 'fail');
  await copySpool(tx, COPY_INTO_IMPORT_TABLE, staged.rows, timeoutMs);
  const { pKey } = await storeStagedProducts(
    tx,
    staged,
    { requestId, onConflict: 'fail' },
    { limit: null, pathOf: staged.pathOf },
  );
  return pKey;
}
