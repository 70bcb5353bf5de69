import type { ZodType } from 'zod';
import { z } from '../openapi/zod.js';
import { HAL_JSON, JSON_TYPE } from './media-types.js';

/**
 * Issue 13: a list reached by a HAL link answers HAL when the client names `application/hal+json`; the default
 * stays the plain array D7 prescribes. Plain JSON first, so a wildcard or missing Accept keeps the array.
 */
export const LIST_WITH_HAL = [JSON_TYPE, HAL_JSON] as const;

/**
 * A list as HAL: the items (each with its own `_links.self`) under `_embedded[rel]`, the list's `self`, and the
 * next page's address when the list is paged and more follow.
 */
export function halList(
  selfHref: string,
  rel: string,
  items: readonly unknown[],
  nextHref?: string,
): Record<string, unknown> {
  return { _embedded: { [rel]: items }, _links: halListLinks(selfHref, nextHref) };
}

/** A HAL list's `_links`: its `self`, and `next` when more follow. */
export function halListLinks(selfHref: string, nextHref?: string): Record<string, { href: string }> {
  return nextHref ? { self: { href: selfHref }, next: { href: nextHref } } : { self: { href: selfHref } };
}

/** The schema of `halList(…, rel, items)` for items of `itemSchema`. */
export function halListSchema(rel: string, itemSchema: ZodType): ZodType {
  return z
    .object({
      _embedded: z.object({ [rel]: z.array(itemSchema) }).strict(),
      _links: z
        .object({
          self: z.object({ href: z.string() }).strict(),
          next: z.object({ href: z.string() }).strict().optional(),
        })
        .strict(),
    })
    .strict();
}
