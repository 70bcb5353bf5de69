import { keySchema, MAX_KEY_LENGTH, MAX_TEXT_LENGTH } from '../http/key-schema.js';
import { MAX_PAGE_SIZE, pageQuerySchema } from '../http/pagination.js';
import { stringifyJson } from '../json.js';
import { z } from '../openapi/zod.js';
import { Quantity } from '../units/quantity.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';

const MAX_DETAILS_DEPTH = 16;
/** Issue 15: one Product with 30 MB of details was stored, and every read of it rendered them all. */
export const MAX_DETAILS_BYTES = 64 * 1024;

/** Optional request values: JSON null means "not given", like an absent field. */
const optionalText = (max: number) => z.string().max(max).nullish();

const dimensionValue = z.number().min(0).nullish();

export const dimensionSchema = z
  .object({
    height: dimensionValue,
    length: dimensionValue,
    width: dimensionValue,
    uom: optionalText(16),
  })
  .openapi('Dimension');

function depthOf(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (limit === 0) return 1;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, limit - 1));
  return deepest + 1;
}

/**
 * Free key/value information, kept exactly as sent (every key, `__proto__` included, and every digit).
 * A record schema would drop such keys; nesting is bounded because PostgreSQL's jsonb depth is, and the size
 * as stored (the JSON text in UTF-8) so that no resource grows without bound.
 */
export const detailsSchema = z
  .custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
    error: 'must be an object',
  })
  .refine((value) => depthOf(value, MAX_DETAILS_DEPTH + 1) <= MAX_DETAILS_DEPTH, {
    error: `must not be nested deeper than ${MAX_DETAILS_DEPTH} levels`,
  })
  .refine((value) => Buffer.byteLength(stringifyJson(value)) <= MAX_DETAILS_BYTES, {
    error: `must not take more than ${MAX_DETAILS_BYTES} bytes as JSON`,
  })
  .nullish()
  .openapi({
    type: ['object', 'null'],
    additionalProperties: true,
    description: `Free key/value information: at most ${MAX_DETAILS_DEPTH} levels deep and ${MAX_DETAILS_BYTES} bytes as JSON`,
  });

export const productUnitSchema = z
  .object({
    label: optionalText(MAX_KEY_LENGTH),
    code: optionalText(MAX_KEY_LENGTH),
    description: optionalText(MAX_TEXT_LENGTH),
    quantity: positiveQuantitySchema,
    dimension: dimensionSchema.nullish(),
    details: detailsSchema,
  })
  .openapi('ProductUnit');

const stackingRuleSchema = z.object({
  noProducts: z.number().int().min(0).max(2_147_483_647),
  allowedProduct: z.object({ sku: keySchema() }),
});

const productFields = {
  sku: keySchema(),
  label: optionalText(MAX_KEY_LENGTH),
  accountId: optionalText(MAX_KEY_LENGTH),
  baseUnit: positiveQuantitySchema,
  description: optionalText(MAX_TEXT_LENGTH),
  availabilityState: z.enum(['LOCKED', 'QC_LOCKED', 'AVAILABLE']).nullish(),
  classification: optionalText(MAX_KEY_LENGTH),
  group: optionalText(MAX_KEY_LENGTH),
  stockZone: z.enum(['A', 'B', 'C']).nullish(),
  overbookingAllowed: z.boolean().nullish(),
  units: z.array(productUnitSchema).max(1000).nullish(),
  dimension: dimensionSchema.nullish(),
  stackingRules: z.array(stackingRuleSchema).max(1000).nullish(),
  details: detailsSchema,
};

type ProductFields = z.infer<z.ZodObject<typeof productFields>>;

/** D2: every unit of a Product measures the same kind of thing as its base unit. */
function unitsOfTheBaseKind(product: ProductFields, ctx: z.RefinementCtx): void {
  // Runs even when some quantity failed to parse (its own issue is reported already): compare only real ones.
  if (!(product.baseUnit instanceof Quantity)) return;
  product.units?.forEach((unit, index) => {
    if (unit?.quantity instanceof Quantity && !unit.quantity.isSameKind(product.baseUnit)) {
      ctx.addIssue({
        code: 'custom',
        path: ['units', index, 'quantity'],
        message: `must be a ${product.baseUnit.kind} quantity like the baseUnit`,
      });
    }
  });
}

export const productCreateSchema = z.object(productFields).superRefine(unitsOfTheBaseKind).openapi('ProductCreate');

/** D10: the body of a create; one object is taken as an array of one. */
export const productListSchema = z.array(productCreateSchema).min(1, { error: 'must contain at least one Product' });

export const productUpdateSchema = z
  .object({
    ...productFields,
    pKey: z.string().min(1),
    ol: z.number().int().min(0).nullish(),
  })
  .superRefine(unitsOfTheBaseKind)
  .openapi('ProductUpdate');

export type ProductInput = z.output<typeof productCreateSchema>;
export type ProductUpdateInput = z.output<typeof productUpdateSchema>;

export const productQuerySchema = z
  .object({
    sku: z.string().optional().openapi({ description: 'The one Product with this SKU (products-findbysku)' }),
    uom: z.string().optional().openapi({
      description:
        'With sku: the Product only if it has this unit of measure: a code (PC) or an amount and code (12 PC) (D11)',
    }),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().openapi({
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      description: 'Without sku: a page of at most this many Products instead of the whole stream (D33)',
    }),
    after: pageQuerySchema.shape.after,
  })
  .refine((query) => query.uom === undefined || query.sku !== undefined, {
    error: 'uom needs sku',
    path: ['uom'],
  })
  .refine((query) => query.sku === undefined || query.after === undefined, {
    error: 'pages the list of all Products: not with sku',
    path: ['after'],
  })
  .refine((query) => query.sku === undefined || query.limit === undefined, {
    error: 'pages the list of all Products: not with sku',
    path: ['limit'],
  });

export const productKeyParamsSchema = z.object({ pKey: z.string() });

/** D35: what a streamed import does with a SKU that is stored already. */
export const productImportQuerySchema = z.object({
  onConflict: z
    .enum(['fail', 'skip', 'update'])
    .default('fail')
    .openapi({
      description:
        'application/x-ndjson only. fail: a stored SKU is a 409 and nothing is stored; skip: stored Products are ' +
        'left as they are; update: each stored Product is replaced by its line as PUT replaces it (D12), and only ' +
        'those that changed are updated (product.event.updated). A SKU sent twice is a 409 in every mode.',
    }),
});

/** The answer of a streamed import (D35). */
export const productImportResultSchema = z
  .object({
    created: z.number().int(),
    skipped: z.number().int().openapi({ description: 'Stored already and left as they were (skip, or unchanged)' }),
    updated: z.number().int(),
  })
  .strict()
  .openapi('ProductImportResult');
