import { keySchema } from '../http/key-schema.js';
import { z } from '../openapi/zod.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';

export const MAX_PARTS = 1000;
const PARTS_PROBLEM = `must be an integer from 1 to ${MAX_PARTS}`;

const nonBlank = keySchema;

const divideFields = {
  transportUnitBK: nonBlank('Business key of the TransportUnit to divide; registered on the spot when unknown'),
  loadUnitType: nonBlank('Type of the LoadUnits to create'),
};

/** D0: a JSON body carries `parts` as a JSON integer, never a string. */
export const divideJsonSchema = z
  .object({
    ...divideFields,
    parts: z
      .number()
      .refine((parts) => Number.isInteger(parts) && parts >= 1 && parts <= MAX_PARTS, { message: PARTS_PROBLEM })
      .openapi({ type: 'integer', minimum: 1, maximum: MAX_PARTS, description: 'Number of LoadUnits' }),
  })
  .openapi('LoadUnitDivide');

/** Form values are text by nature (D0): `parts` is parsed, digits only, so `1.5`, `-1` and `abc` are refused. */
export const divideFormSchema = z.object({
  ...divideFields,
  parts: z.string().transform((text, ctx) => {
    const parts = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
    if (parts >= 1 && parts <= MAX_PARTS) return parts;
    ctx.addIssue({ code: 'custom', message: PARTS_PROBLEM, input: text });
    return z.NEVER;
  }),
});

export type DivideInput = z.output<typeof divideJsonSchema>;

export const putProductIntoSchema = z
  .object({
    sku: nonBlank('SKU of the Product to assign'),
    baseUnit: positiveQuantitySchema,
  })
  .openapi('LoadUnitProductAssignment');
export type PutProductIntoInput = z.output<typeof putProductIntoSchema>;

/** D0: `locked` is a JSON boolean, never `"true"` or `1`. */
export const lockChangeSchema = z
  .object({ locked: z.boolean().openapi({ description: 'true: locked for allocation' }) })
  .openapi('LoadUnitLockChange');

export const loadUnitKeyParamsSchema = z.object({ pKey: z.string() });

export const transportUnitParamsSchema = z.object({ transportUnitBK: z.string() });
