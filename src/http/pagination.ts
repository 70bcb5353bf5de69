import type { Request, Response } from 'express';
import { z } from '../openapi/zod.js';
import { href } from './links.js';

/** The largest page any list answers: about a megabyte of JSON for the largest items. */
export const MAX_PAGE_SIZE = 1000;

/**
 * Issue 15: `limit` and `after` for a list that answers a plain array (the spec's shape), so the page cannot
 * carry its own cursor: the next page's address comes in a `Link: <…>; rel="next"` header (RFC 8288), and in
 * `_links.next` of a HAL list. `after` is opaque to clients; they follow the link.
 */
export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(MAX_PAGE_SIZE).openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: MAX_PAGE_SIZE,
    description: 'At most this many items; a `Link: rel="next"` header leads to the rest',
  }),
  after: z
    .string()
    .regex(/^[1-9]\d{0,17}$/, { error: 'must be the cursor of a next link' })
    .transform(Number)
    .optional()
    .openapi({ type: 'string', description: "Where the page starts: take it from the previous page's next link" }),
});

export type PageQuery = z.output<typeof pageQuerySchema>;

export interface Page<Item> {
  readonly items: readonly Item[];
  /** The `after` of the next page, when there is one: a row id, or an opaque key of a list in another order. */
  readonly next?: number | string;
}

/** Splits `limit + 1` rows read in list order into the page and, when the extra row came, the next cursor. */
export function pageOf<Row>(
  rows: readonly Row[],
  limit: number,
  cursorOf: (row: Row) => NonNullable<Page<Row>['next']>,
): Page<Row> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursorOf(items[items.length - 1]!) };
}

/**
 * The absolute address of the page after this one, or undefined on the last page; `filters` are the list's query
 * parameters besides `limit` and `after`, which the next page keeps. `sizeParameter` names the page size where a
 * list's contract calls it otherwise (the PackagingUnit search's `amount`).
 */
export function nextPageHref(
  req: Request,
  page: Page<unknown>,
  limit: number,
  filters: Readonly<Record<string, string | undefined>> = {},
  sizeParameter = 'limit',
): string | undefined {
  if (page.next === undefined) return undefined;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, value);
  query.set(sizeParameter, String(limit));
  query.set('after', String(page.next));
  return href(req, `${req.baseUrl}${req.path}?${query.toString()}`);
}

/** Sets the `Link` header to the next page when there is one. */
export function linkNextPage(res: Response, next: string | undefined): void {
  if (next !== undefined) res.setHeader('Link', `<${next}>; rel="next"`);
}

export const NEXT_PAGE_HEADER = {
  Link: {
    description: '`<…>; rel="next"`: the address of the next page, only when more items follow',
    schema: { type: 'string' },
  },
} as const;
