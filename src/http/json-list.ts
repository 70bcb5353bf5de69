import type { Request, Response } from 'express';
import { stringifyJson } from '../json.js';
import { halListLinks } from './hal-list.js';
import type { OutgoingStreams } from './stream-writer.js';

/** The first read of a list, before the size of its items is known: a few. */
const UNSIZED_READ = 16;
/** The most items one read takes, however small they are. */
const MAX_READ = 500;

/**
 * The next items after `after` (undefined: the first), at most `limit`; fewer only at the end of the list. It gives
 * its database connection back before it returns.
 */
export type ListReader<Item> = (after: Item | undefined, limit: number) => Promise<readonly Item[]>;

/** A list body: its items as read and rendered one by one, and the text around them (`[` `]`, or HAL's envelope). */
export interface JsonList<Item> {
  readonly opening: string;
  readonly read: ListReader<Item>;
  readonly view: (item: Item) => unknown;
  readonly closing: string;
}

/** Reads the items of an array read before, in order. */
export function arrayReader<Item>(items: readonly Item[]): ListReader<Item> {
  let offset = 0;
  return (_after, limit) => {
    const slice = items.slice(offset, offset + limit);
    offset += slice.length;
    return Promise.resolve(slice);
  };
}

/** The plain JSON array of the items. */
export function plainJsonList<Item>(read: ListReader<Item>, view: (item: Item) => unknown): JsonList<Item> {
  return { opening: '[', read, view, closing: ']' };
}

/** The text `halList(selfHref, rel, items, nextHref)` stringifies to, its items read and rendered one by one. */
export function halJsonList<Item>(
  selfHref: string,
  rel: string,
  read: ListReader<Item>,
  view: (item: Item) => unknown,
  nextHref?: string,
): JsonList<Item> {
  return {
    opening: `{"_embedded":{${JSON.stringify(rel)}:[`,
    read,
    view,
    closing: `]},"_links":${stringifyJson(halListLinks(selfHref, nextHref))}}`,
  };
}

/**
 * D39: a list (a page, or a list of one LoadUnit's units) written as it is read, through the instance's
 * StreamWriter. The first read takes a few items, the next about the writer's read-ahead of them, so a client that
 * reads slowly or not at all holds at most that and the writer's bounds (it is cut when it stalls, counted as a
 * `list`), never the whole list rendered as one string. The body is the text `JSON.stringify` gives the whole list,
 * in the media type negotiation chose, with the charset `res.send` would name.
 */
export async function sendJsonList<Item>(
  outgoing: OutgoingStreams,
  req: Request,
  res: Response,
  status: number,
  list: JsonList<Item>,
): Promise<void> {
  const writer = outgoing.open(req, res, 'list');
  let size = UNSIZED_READ;
  // Read before the status is sent: a database that fails now still gets its proper answer.
  let items = await list.read(undefined, size);
  res.status(status).type(req.mediaType ?? 'application/json');
  const type = String(res.get('Content-Type'));
  if (!/;\s*charset=/i.test(type)) res.set('Content-Type', `${type}; charset=utf-8`);
  const sent = async (): Promise<boolean> => {
    let separator = list.opening;
    for (;;) {
      let largest = 1;
      for (const item of items) {
        const text = separator + stringifyJson(list.view(item));
        largest = Math.max(largest, text.length * 2);
        if (!(await writer.send(text))) return false;
        separator = ',';
      }
      if (items.length < size) break;
      size = Math.max(1, Math.min(MAX_READ, Math.floor(outgoing.readAheadBytes / largest)));
      // No read ahead for a client that takes nothing now: it may stall, and what was read would wait with it.
      if (!(await writer.ready(size * largest))) return false;
      items = await list.read(items.at(-1), size);
    }
    const closing = separator === ',' ? list.closing : list.opening + list.closing;
    return (await writer.send(closing)) && writer.drained();
  };
  if (await sent()) res.end();
  // Cut short (stalled, token expired, client gone): a truncated body is what the client can tell apart.
  else res.destroy();
}
