import { keySchema } from '../http/key-schema.js';
import { z } from '../openapi/zod.js';
import type { FeedEntry } from './feed-entry.js';
import type { EventType } from './outbox.js';

/** D27's event types, as `types=` may name them. */
export const EVENT_TYPES: readonly EventType[] = [
  'product.event.created',
  'product.event.updated',
  'product.event.deleted',
  'lu.event.created',
  'lu.event.changed',
  'pu.event.created',
  'pu.event.moved',
  'pu.event.changed',
  'pu.event.deleted',
  'allocation.event.reserved',
  'allocation.event.released',
  'allocation.event.expired',
  'allocation.event.picked',
  'allocation.event.issued',
];

export const MAX_FILTER_TYPES = 50;

/** `prefix.*` names every type that starts with `prefix.` (`pu.*`, `pu.event.*`). */
function typesOfEntry(entry: string): readonly string[] {
  if (!entry.endsWith('.*')) return EVENT_TYPES.includes(entry as EventType) ? [entry] : [];
  const prefix = entry.slice(0, -1);
  return EVENT_TYPES.filter((type) => type.startsWith(prefix));
}

export const typesSchema = z
  .string()
  .transform((value, ctx) => {
    const entries = value.split(',').map((entry) => entry.trim());
    if (entries.length > MAX_FILTER_TYPES) {
      ctx.addIssue({ code: 'custom', message: `must name at most ${MAX_FILTER_TYPES} event types` });
      return z.NEVER;
    }
    const types = new Set<string>();
    for (const entry of entries) {
      const named = typesOfEntry(entry);
      if (named.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `names no event type: [${entry}] (types are e.g. pu.event.moved, or a prefix as pu.*)`,
        });
        return z.NEVER;
      }
      for (const type of named) types.add(type);
    }
    return types as ReadonlySet<string>;
  })
  .openapi({
    type: 'string',
    description:
      `Only events of these types: a comma-separated list of D27 event types, a \`prefix.*\` naming all types ` +
      `that start with it (\`pu.*\`, \`allocation.event.*\`); at most ${MAX_FILTER_TYPES} entries. \`next\` and ` +
      'the stream ids still count the whole feed',
    example: 'pu.event.moved,allocation.*',
  });

export const skuFilterSchema = keySchema()
  .refine((value) => !value.includes('\u0000'), { error: 'must not contain control characters' })
  .openapi({
    description:
      'Only events whose resource names this SKU (a Product, a unit or load unit holding it, a reservation of ' +
      'it). `next` and the stream ids still count the whole feed',
  });

/** Which events a reader wants; undefined parts take every event. */
export interface FeedFilter {
  readonly types?: ReadonlySet<string>;
  readonly sku?: string;
}

export function matches(filter: FeedFilter, entry: FeedEntry): boolean {
  return (!filter.types || filter.types.has(entry.type)) && (filter.sku === undefined || entry.skus.has(filter.sku));
}
