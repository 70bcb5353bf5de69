import { keySchema } from '../http/key-schema.js';
import { z } from '../openapi/zod.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';

export const allocationRequestSchema = z
  .object({
    sku: keySchema(),
    qty: positiveQuantitySchema,
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

export const reservationParamsSchema = z.object({ reservationId: z.string() });
