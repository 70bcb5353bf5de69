import type { Request, Response } from 'express';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import type { ByteSize } from '../config.js';
import { RowSpool } from '../db/row-spool.js';
import type { ApiError } from './api-error.js';
import type { BodyShare } from './body-budget.js';
import { JsonElements, type JsonElement } from './json-elements.js';
import { formatIssuePath, InputProblems, isJsonObject } from './validate.js';

/**
 * A bulk body's 400 names at most this many problems: once they are found the body is refused and the rest of it
 * read off unparsed, so a body of 200,000 bad items costs what 100 do (issue 39).
 */
export const MAX_BULK_PROBLEMS = 100;

/** What the items kept of a bulk body take in memory, per byte of their JSON text (measured: 2.2 to 3). */
const KEPT_BYTES_PER_BYTE = 3;

/** The longest the event loop is kept by one body before other requests are served: a slice of its work. */
export const SLICE_MS = 10;

/** Hands out turns of the event loop: `due()` once a slice has been used, `next()` to let others in. */
export class Slices {
  private started = performance.now();

  due(): boolean {
    return performance.now() - this.started >= SLICE_MS;
  }

  async next(): Promise<void> {
    await nextTurn();
    this.started = performance.now();
  }
}

/** What a bulk operation's JSON body is: a list of items, each checked on its own as it arrives. */
export interface BulkShape<T> {
  /** One item. */
  readonly item: z.ZodType<T>;
  /** The whole body: what a body that holds no items (none, empty, of another type) is answered with. */
  readonly body: z.ZodType;
  /** The most items the list takes; the first one more refuses the body. */
  readonly maxItems?: number;
  /** One object is taken as a list of one, its problems named without a prefix. */
  readonly single?: boolean;
  /**
   * An object body holds its list under `key` (`{"packagingUnits": [...]}`), `body` being that object's schema; a
   * bare array is taken as well.
   */
  readonly within?: { readonly key: string; readonly body: z.ZodType };
}

/** A bulk body read and checked; its items are those it holds when it has no problem. */
export interface BulkItems<T> {
  readonly items: T[];
  /** How a problem of item `index` is prefixed in the form the client sent: `[3].`, `packagingUnits[3].` or ''. */
  readonly pathOf: (index: number) => string;
  /**
   * D6's 400 naming its problems (at most MAX_BULK_PROBLEMS), answered by the handler, as the check of a body read
   * whole was: after the Idempotency-Key is looked at.
   */
  readonly invalid: ApiError | undefined;
}

const bodyPath = (path: readonly PropertyKey[]): string => formatIssuePath(path) || 'body';

/** zod's own words for a list one item too long, so the answer is the one the list's schema gives. */
function tooManyProblem(maxItems: number, within: string | undefined): { path: PropertyKey[]; message: string } {
  const result = z
    .array(z.unknown())
    .max(maxItems)
    .safeParse(new Array<null>(maxItems + 1).fill(null));
  const message = result.success ? `must hold at most ${maxItems} items` : result.error.issues[0]!.message;
  return { path: within ? [within] : [], message };
}

/** Where a bulk body's checked items go, as they are read. */
interface ItemSink<T> {
  /** Takes an item with no problem, while the body has none. */
  readonly keep: (item: T, index: number) => void;
  /** Called before each piece of text is read, with whether a problem was found already. */
  readonly beforePiece: (piece: string, found: boolean) => Promise<void>;
}

/**
 * Issue 39 (D38): a bulk JSON body is parsed as it arrives, in slices of at most SLICE_MS between which the event
 * loop serves other requests, and each item is checked by `shape.item` once it is complete and handed to `sink`, so
 * only the piece of text being read and one item being built are held, never the body's text or its parsed whole.
 * The body is refused as soon as it is known to be: at the first item beyond `maxItems`, or once MAX_BULK_PROBLEMS
 * problems are found; the rest is then read off unparsed and unkept, and the answer sent. Malformed JSON, a lone
 * surrogate or a repeated key are a 400 as for a body read whole, an item beyond `elementLimit` (BODY_LIMIT) a 413.
 */
async function readItems<T>(
  pieces: AsyncIterable<string>,
  elementLimit: ByteSize,
  shape: BulkShape<T>,
  sink: ItemSink<T>,
): Promise<Omit<BulkItems<T>, 'items'>> {
  const within = shape.within?.key;
  const elements = new JsonElements(elementLimit, within);
  const problems = new InputProblems();
  const slices = new Slices();
  let counted = 0;
  let whole: { value: unknown } | undefined;
  let refused = false;
  const itemPath = (index: number): PropertyKey[] => (elements.member?.kind === 'array' ? [within!, index] : [index]);
  const take = async (list: readonly JsonElement[]): Promise<void> => {
    for (const { index, value } of list) {
      if (index === undefined) {
        whole = { value };
      } else if (++counted > (shape.maxItems ?? Infinity)) {
        problems.add([tooManyProblem(shape.maxItems!, elements.member ? within : undefined)]);
      } else {
        const item = problems.check(shape.item, value, itemPath(index));
        if (item !== undefined && !problems.found) sink.keep(item, index);
      }
      if (counted > (shape.maxItems ?? Infinity) || problems.count >= MAX_BULK_PROBLEMS) {
        refused = true;
        return;
      }
      if (slices.due()) await slices.next();
    }
  };
  for await (const piece of pieces) {
    await sink.beforePiece(piece, problems.found);
    await take(elements.write(piece));
    // Leaving the loop ends the body's reading: its rest is read off unkept (see readPieces).
    if (refused) break;
    if (slices.due()) await slices.next();
  }
  if (!refused) {
    await take(elements.end());
    const single = counted === 0 ? checkWithoutItems(shape, elements, whole?.value, problems) : undefined;
    if (single !== undefined) sink.keep(single, 0);
  }
  const member = elements.member?.kind === 'array';
  return {
    pathOf: member ? (index) => `${within}[${index}].` : elements.array ? (index) => `[${index}].` : () => '',
    invalid: problems.found ? problems.error(bodyPath) : undefined,
  };
}

/**
 * A bulk body read as readItems says, its items kept in memory: while they are, the body's `share` of the body
 * budget grows by what they hold, so that the budget counts what the body really holds until its answer is sent.
 */
export async function readBulk<T>(
  pieces: AsyncIterable<string>,
  elementLimit: ByteSize,
  shape: BulkShape<T>,
  share?: BodyShare,
): Promise<BulkItems<T>> {
  const items: T[] = [];
  const { pathOf, invalid } = await readItems(pieces, elementLimit, shape, {
    keep: (item) => items.push(item),
    beforePiece: async (piece, found) => {
      if (!found) await share?.grow(Buffer.byteLength(piece) * KEPT_BYTES_PER_BYTE);
    },
  });
  return { items: invalid ? [] : items, pathOf, invalid };
}

/** A bulk body read and checked, its items staged as COPY rows in a spool file; nothing is stored yet. */
export interface StagedBulk {
  readonly rows: RowSpool;
  readonly pathOf: (index: number) => string;
  readonly invalid: ApiError | undefined;
}

/** Rows go to the spool in pieces of about this many characters. */
const SPOOL_PIECE_CHARS = 256 * 1024;

/**
 * Issue 34 item 5: a bulk body read as readItems says, each item turned into a COPY row by `rowOf` (with its index)
 * and spooled to a file, so that neither the body nor its items are held however large it is: the handler copies
 * the rows into a staging table and stores them with set-based statements. The spool is let go when the answer is
 * sent or the client leaves (`res` closes).
 */
export async function stageBulk<T>(
  pieces: AsyncIterable<string>,
  elementLimit: ByteSize,
  shape: BulkShape<T>,
  rowOf: (item: T, index: number) => string,
  res: Response,
): Promise<StagedBulk> {
  const rows = await RowSpool.open();
  let pending = '';
  const flush = async (): Promise<void> => {
    if (pending === '') return;
    const written = pending;
    pending = '';
    await rows.write(written);
  };
  try {
    const read = await readItems(pieces, elementLimit, shape, {
      keep: (item, index) => {
        pending += rowOf(item, index);
      },
      beforePiece: async (_piece, found) => {
        // Once one item is invalid nothing is stored: the rest are only checked, for the 400 to name them all.
        if (found) pending = '';
        else if (pending.length >= SPOOL_PIECE_CHARS) await flush();
      },
    });
    await flush();
    const release = (): void => void rows.close().catch(() => undefined);
    if (res.closed) release();
    else res.once('close', release);
    return { rows, ...read };
  } catch (error) {
    await rows.close();
    throw error;
  }
}

/**
 * A body that handed out no item: one object taken as a list of one (answered as its item), or the answers of the
 * body's schema (an empty list, a value of another type, an object without its list).
 */
function checkWithoutItems<T>(
  shape: BulkShape<T>,
  elements: JsonElements,
  whole: unknown,
  problems: InputProblems,
): T | undefined {
  const member = elements.member;
  if (member && shape.within) {
    const held = member.kind === 'array' ? [] : member.kind === 'other' ? member.like : undefined;
    problems.check(shape.within.body, held === undefined ? {} : { [shape.within.key]: held });
  } else if (elements.array) {
    problems.check(shape.body, []);
  } else if (shape.single && isJsonObject(whole)) {
    return problems.check(shape.item, whole);
  } else if (shape.within) {
    problems.check(shape.within.body, whole);
  } else {
    problems.check(shape.body, whole);
  }
  return undefined;
}

/**
 * The items of a bulk body as the route's reader left them in `req.body`; a request without a body gets the
 * answers of the body's schema (`body: required`). Throws the body's 400.
 */
export function bulkItemsOf<T>(req: Request, shape: BulkShape<T>): BulkItems<T> {
  const read = req.body as BulkItems<T> | undefined;
  if (read === undefined) throw missingBody(shape);
  if (read.invalid) throw read.invalid;
  return read;
}

function missingBody(shape: BulkShape<unknown>): ApiError {
  const problems = new InputProblems();
  problems.check(shape.body, undefined);
  return problems.error(bodyPath);
}

/** The staged rows of a bulk body as stageBulk left them in `req.body`; throws the body's 400 as bulkItemsOf does. */
export function stagedBulkOf(req: Request, shape: BulkShape<unknown>): StagedBulk {
  const staged = req.body as StagedBulk | undefined;
  if (staged === undefined) throw missingBody(shape);
  if (staged.invalid) throw staged.invalid;
  return staged;
}
