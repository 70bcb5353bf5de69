import { keySchema, keyText, MAX_TEXT_LENGTH } from '../http/key-schema.js';
import { z } from '../openapi/zod.js';

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

const key = keySchema;

// D9: unknown fields, and read-only fields (pKey, ol, createDt, links), are accepted and ignored (z.object strips).
export const locationGroupUpsertSchema = z
  .object({
    name: key('Unique name of the LocationGroup'),
    parent: key('Name of the parent LocationGroup; absent or null: none').nullish(),
  })
  .openapi('LocationGroupUpsert');

export const locationGroupsUpsertSchema = z.array(locationGroupUpsertSchema).min(1);
export type LocationGroupUpsert = z.output<typeof locationGroupUpsertSchema>;

export const locationUpsertSchema = z
  .object({
    locationId: key('Location identifier, the key of the upsert'),
    erpCode: key('ERP code, unique among Locations').nullish(),
    locationGroupName: key('Name of the LocationGroup the Location belongs to').nullish(),
    incomingActive: z.boolean().nullish().openapi({ description: 'Default true' }),
    outgoingActive: z.boolean().nullish().openapi({ description: 'Default true' }),
    plcState: z.number().int().min(INT32_MIN).max(INT32_MAX).nullish().openapi({ description: 'Default 0' }),
    description: z.string().max(MAX_TEXT_LENGTH).nullish(),
    noMaxTransportUnits: z.number().int().min(0).max(INT32_MAX).nullish(),
  })
  .openapi('LocationUpsert');

export const locationsUpsertSchema = z.array(locationUpsertSchema).min(1);
export type LocationUpsert = z.output<typeof locationUpsertSchema>;

export const locationQuerySchema = z
  .object({
    locationId: key('Location identifier').optional(),
    erpCode: key('ERP code').optional(),
  })
  .superRefine((query, ctx) => {
    if ((query.locationId === undefined) === (query.erpCode === undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of locationId and erpCode' });
    }
  });

export const locationGroupQuerySchema = z.object({ name: key('Name of the LocationGroup') });

/** A Location named in a request: by `erpCode` or `locationId` (D15). */
export const locationReferenceSchema = z
  .object({
    erpCode: keyText().nullish(),
    locationId: keyText().nullish(),
  })
  .openapi('LocationReference');

/**
 * Types are checked here (D0: 400 core.validation.error); what is missing or blank is checked by the service,
 * which answers with the spec's own keys (owms.wms.inv.tu.bk …) in the spec's order.
 */
export const transportUnitCreateSchema = z
  .object({
    transportUnitBK: keyText().nullish().openapi({ description: 'Business key, required' }),
    transportUnitType: keyText().nullish().openapi({ description: 'Type, required' }),
    actualLocation: locationReferenceSchema.nullish().openapi({ description: 'Required: erpCode or locationId' }),
  })
  .openapi('TransportUnitCreate');
export type TransportUnitCreate = z.output<typeof transportUnitCreateSchema>;

export const transportUnitQuerySchema = z.object({ bk: key('Business key of the TransportUnit') });

export const transportUnitMoveQuerySchema = z.object({
  bk: key('Business key of the TransportUnit'),
  newLocation: key('ERP code of the target Location'),
});
