import { locationGroupNamesSchema } from '../allocation/schemas.js';
import { keySchema } from '../http/key-schema.js';
import { MAX_PAGE_SIZE } from '../http/pagination.js';
import { timestampSchema } from '../http/timestamp-schema.js';
import { z } from '../openapi/zod.js';

/** The opaque `after` of the stock list: the last SKU of the previous page, base64url-encoded. */
export function stockCursorOf(sku: string): string {
  return Buffer.from(sku, 'utf8').toString('base64url');
}

const cursorSchema = z.string().transform((text, ctx) => {
  const sku = /^[A-Za-z0-9_-]+$/.test(text) ? Buffer.from(text, 'base64url').toString('utf8') : '';
  if (sku === '' || stockCursorOf(sku) !== text) {
    ctx.addIssue({ code: 'custom', message: 'must be the cursor of a next link' });
    return z.NEVER;
  }
  return sku;
});

/**
 * D31: with `sku` one Product's figures (optionally in some LocationGroups, by place, or at a past instant);
 * without it every Product's, a page at a time. Which parameters go together is checked by the service.
 */
export const stockQuerySchema = z.object({
  sku: keySchema('The Product; without it, every Product a page at a time').optional(),
  sourceLocationGroupNames: locationGroupNamesSchema.optional().openapi({
    description: 'Only stock in these LocationGroups and their children, comma-separated or repeated (as allocation)',
  }),
  by: z
    .enum(['locationGroup', 'location'], { error: 'must be locationGroup or location' })
    .optional()
    .openapi({ description: 'Adds `rows`: the figures per LocationGroup or per Location holding stock' }),
  at: timestampSchema.optional().openapi({
    description: 'onHand and reserved as they were at this past instant, from the ledger; available is left out',
  }),
  asOf: z
    .string()
    .regex(/^(0|[1-9]\d{0,17})$/, { error: 'must be a feedCursor this service answered' })
    .transform(Number)
    .optional()
    .openapi({
      type: 'string',
      description:
        'Without sku: the figures as of this `feedCursor` of an earlier page, so that all pages are one snapshot ' +
        '(onHand and reserved; available is left out); 410 once that history is no longer kept',
    }),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: MAX_PAGE_SIZE,
    description: 'Without sku: at most this many Products; a `Link: rel="next"` header leads to the rest',
  }),
  after: cursorSchema.optional().openapi({
    type: 'string',
    description: "Without sku: where the page starts; take it from the previous page's next link",
  }),
});

export type StockQuery = z.output<typeof stockQuerySchema>;
