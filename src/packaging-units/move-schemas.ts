import { keySchema } from '../http/key-schema.js';
import { z } from '../openapi/zod.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';
import { locationReferenceSchema, nullishOf, productReferenceSchema } from './schemas.js';

const key = keySchema();
const byLocationId = z.object({ locationId: key });
const quantity = nullishOf(positiveQuantitySchema);

/** Move one unit (PUT /v1/packaging-units/{pKey}): to a Location or into a LoadUnit. */
export const moveUnitSchema = z
  .object({
    pKey: z.string().nullish(),
    product: nullishOf(productReferenceSchema),
    quantity,
    actualLocation: locationReferenceSchema.nullish(),
    loadUnit: z
      .object({
        pKey: z.string().nullish(),
        transportUnitBK: key.nullish(),
        physicalPosition: key.nullish(),
        locked: z.boolean().nullish(),
      })
      .refine((lu) => Boolean(lu.pKey) || (Boolean(lu.transportUnitBK) && Boolean(lu.physicalPosition)), {
        error: 'give pKey, or transportUnitBK and physicalPosition',
      })
      .nullish(),
  })
  .refine((body) => Boolean(body.actualLocation) !== Boolean(body.loadUnit), {
    error: 'give either actualLocation or loadUnit as the target',
    path: ['actualLocation'],
  })
  .openapi('MovePackagingUnit');

/** The most moves one request takes. */
export const MAX_MOVES = 10_000;

export const moveBetweenLocationSchema = z.object({
  product: productReferenceSchema,
  quantity,
  actualLocation: byLocationId,
  targetLocation: byLocationId,
});

export const moveBetweenLocationsSchema = z
  .array(moveBetweenLocationSchema)
  .min(1)
  .max(MAX_MOVES)
  .openapi('MoveBetweenLocations');

export const moveToLoadUnitSchema = z
  .object({
    product: productReferenceSchema,
    quantity,
    targetTransportUnitBK: key,
    targetLoadUnitPosition: key,
    actualLocation: z.object({ erpCode: key }),
  })
  .openapi('MoveToLoadUnit');

/** From a LoadUnit by position: into another LoadUnit, or onto a Location. */
export const moveFromLoadUnitSchema = z
  .object({
    product: productReferenceSchema,
    quantity,
    targetTransportUnitBK: key.nullish(),
    targetLoadUnitPosition: key.nullish(),
    actualLocation: byLocationId.nullish(),
  })
  .refine(
    (body) =>
      Boolean(body.actualLocation) !== (Boolean(body.targetTransportUnitBK) && Boolean(body.targetLoadUnitPosition)),
    { error: 'give actualLocation, or targetTransportUnitBK and targetLoadUnitPosition', path: ['actualLocation'] },
  )
  .openapi('MoveFromLoadUnit');

export type MoveUnitInput = z.output<typeof moveUnitSchema>;
export type MoveBetweenLocationsInput = z.output<typeof moveBetweenLocationsSchema>;
export type MoveToLoadUnitInput = z.output<typeof moveToLoadUnitSchema>;
export type MoveFromLoadUnitInput = z.output<typeof moveFromLoadUnitSchema>;
