import { keySchema, keyText, MAX_KEY_LENGTH, MAX_TEXT_LENGTH } from '../http/key-schema.js';
import { timestampSchema } from '../http/timestamp-schema.js';
import { z } from '../openapi/zod.js';
import { detailsSchema, dimensionSchema } from '../products/schemas.js';
import { positiveQuantitySchema, quantitySchema } from '../units/quantity-schema.js';
import { SORT_PROPERTIES, unitCursorSchema } from './unit-cursor.js';

const key = keySchema;

/**
 * `schema`, or null, or absent. zod-to-openapi 9 writes `.nullish()` of a named schema as
 * `allOf: [$ref, {type: [object, null]}]`, a type generated clients cannot fill (issue 13), and may even make the
 * named component itself nullable. An unnamed copy (the same definition, so the same validation) is written
 * inline as `object | null`.
 */
export function nullishOf<S extends z.ZodType>(schema: S) {
  return schema.clone(schema.def).nullish();
}

export const productReferenceSchema = z.object({ sku: key('SKU of the Product') }).openapi('ProductReference');

/** The spec names these fields twice (piecesPerLayer / piecesPerLoadUnitLayer); both are accepted. */
const distributionSchema = z
  .object({
    piecesPerLayer: z.number().int().min(0).nullish(),
    piecesPerLoadUnitLayer: z.number().int().min(0).nullish(),
    numberOfLayers: z.number().int().min(0).nullish(),
    numberOfLoadUnitLayers: z.number().int().min(0).nullish(),
    carrierType: z.string().max(MAX_KEY_LENGTH).nullish(),
  })
  .transform((distribution) => ({
    piecesPerLayer: distribution.piecesPerLayer ?? distribution.piecesPerLoadUnitLayer ?? undefined,
    numberOfLayers: distribution.numberOfLayers ?? distribution.numberOfLoadUnitLayers ?? undefined,
    carrierType: distribution.carrierType ?? undefined,
  }));

const weightSchema = quantitySchema.refine((weight) => weight.kind === 'Weight' && weight.magnitude.gte(0), {
  error: 'must be a non-negative Weight quantity',
});

/** D18: what a new PackagingUnit may carry besides its Product and quantity. */
const optionalFields = {
  serialNumber: z.string().max(MAX_KEY_LENGTH).nullish(),
  expiresAt: timestampSchema.nullish(),
  labels: z.array(keyText()).max(100).nullish(),
  dimension: nullishOf(dimensionSchema),
  weight: nullishOf(weightSchema),
  distribution: distributionSchema.nullish(),
  physicalPosition: keyText().nullish(),
  details: detailsSchema,
};

export const newPackagingUnitSchema = z
  .object({ product: productReferenceSchema, quantity: positiveQuantitySchema, ...optionalFields })
  .openapi('NewPackagingUnit');

export type NewPackagingUnit = z.output<typeof newPackagingUnitSchema>;

export const locationReferenceSchema = z
  .object({
    locationId: keyText().min(1).nullish(),
    erpCode: keyText().min(1).nullish(),
  })
  .refine((ref) => Boolean(ref.locationId) !== Boolean(ref.erpCode), { error: 'give locationId or erpCode' });

export const newPackagingUnitOnLocationSchema = z
  .object({ ...newPackagingUnitSchema.shape, actualLocation: locationReferenceSchema })
  .openapi('NewPackagingUnitOnLocation');

export type NewPackagingUnitOnLocation = z.output<typeof newPackagingUnitOnLocationSchema>;

/** The most units one request creates. */
export const MAX_NEW_UNITS = 10_000;

/** A bare array of new units, accepted besides the spec's `{packagingUnits: [...]}`. */
export const newPackagingUnitsSchema = z.array(newPackagingUnitSchema).min(1).max(MAX_NEW_UNITS);

export const createInLoadUnitBodySchema = z.object({ packagingUnits: newPackagingUnitsSchema });

export const loadUnitAddressSchema = z.object({
  transportUnitBK: key('Business key of the TransportUnit'),
  luPos: key('Position of the LoadUnit on the TransportUnit'),
});

export const createInLoadUnitQuerySchema = z.object({
  loadUnitType: keyText().optional().openapi({ description: 'Type of a LoadUnit created here' }),
});

export const packagingUnitKeySchema = z.object({ pKey: z.string() });

const sortFields = {
  sortDirection: z
    .string()
    .transform((value) => value.toUpperCase())
    .pipe(z.enum(['ASC', 'DESC'], { error: 'must be ASC or DESC' }))
    .optional(),
  sortProperty: z.enum(SORT_PROPERTIES, { error: `must be one of ${SORT_PROPERTIES.join(', ')}` }).optional(),
  amount: z
    .string()
    .regex(/^\d+$/, { error: 'must be an integer from 1 to 10000' })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, { error: 'must be an integer from 1 to 10000' })
        .max(10_000, { error: 'must be an integer from 1 to 10000' }),
    )
    .optional()
    .openapi({
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 1000,
      description: 'At most this many units; a `Link: rel="next"` header leads to the rest (D39)',
    }),
  after: unitCursorSchema.optional(),
};

/** D19: the finders of GET /v1/packaging-units, told apart by their parameters. */
export const packagingUnitSearchSchema = z.object({
  sku: z.string().min(1).optional(),
  productPKey: z.string().min(1).optional(),
  locationGroupName: z.string().min(1).optional(),
  locationId: z.string().min(1).optional(),
  ...sortFields,
});

export type PackagingUnitSearch = z.output<typeof packagingUnitSearchSchema>;

export const deleteOnLocationSchema = z.object({
  product: productReferenceSchema,
  actualLocation: locationReferenceSchema,
  quantity: nullishOf(positiveQuantitySchema),
});

export const reportProblemSchema = z.object({
  messageNo: z.string().max(MAX_KEY_LENGTH).nullish(),
  messageText: z.string().max(MAX_TEXT_LENGTH).nullish(),
  product: productReferenceSchema,
  quantity: positiveQuantitySchema,
});

/** D35: a line of a stock intake into a LoadUnit, created on the spot (with loadUnitType) as the single create does. */
export const intakeInLoadUnitSchema = z
  .object({
    transportUnitBK: key('Business key of the TransportUnit, registered on the spot when unknown'),
    luPos: key('Position of the LoadUnit on the TransportUnit'),
    loadUnitType: keyText().nullish().openapi({ description: 'Type of a LoadUnit created here' }),
    ...newPackagingUnitSchema.shape,
  })
  .openapi('IntakeUnitInLoadUnit');

/** D35: a line of a stock intake lying directly on a Location. */
export const intakeOnLocationSchema = z
  .object({
    ...newPackagingUnitSchema.shape,
    actualLocation: z.object({ locationId: key('The Location the unit lies on') }),
  })
  .openapi('IntakeUnitOnLocation');

export const intakeResultSchema = z.object({ created: z.number().int() }).openapi('IntakeResult');
