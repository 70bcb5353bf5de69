import { keySchema } from '../http/key-schema.js';
import { timestampSchema } from '../http/timestamp-schema.js';
import { z } from '../openapi/zod.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';

const YEAR_MS = 366 * 24 * 3_600_000;

/** D32: in the future and at most a year ahead (a leap year's 366 days), judged when the request is read. */
const expiresAtSchema = timestampSchema.refine(
  (instant) => {
    const at = Date.parse(instant);
    return at > Date.now() && at <= Date.now() + YEAR_MS;
  },
  { error: 'must be in the future and at most a year ahead' },
);

export const allocationRequestSchema = z
  .object({
    sku: keySchema(),
    qty: positiveQuantitySchema,
    externalRef: keySchema('What the reservation is for, e.g. an order line: 1 to 255 characters').optional(),
    expiresAt: expiresAtSchema.optional().openapi({
      description: 'When an unpicked, unissued reservation ends by itself (EXPIRED); at most a year ahead',
    }),
  })
  .openapi('AllocationRequest');

export type AllocationRequest = z.output<typeof allocationRequestSchema>;

/** LocationGroup names, comma-separated or repeated; blanks left out. */
export const locationGroupNamesSchema = z.union([z.string(), z.array(z.string())]).transform((value) =>
  (Array.isArray(value) ? value : [value])
    .flatMap((names) => names.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== ''),
);

/** `sourceLocationGroupNames` comma-separated or repeated; `allowPartial` defaults to true (D23). */
export const allocationQuerySchema = z.object({
  sourceLocationGroupNames: locationGroupNamesSchema.optional().openapi({
    description: 'Take only from these LocationGroups and their children: comma-separated or repeated',
  }),
  allowPartial: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .openapi({ description: 'false: 409 instead of allocating less than asked for; default true' }),
});
