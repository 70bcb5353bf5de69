import { keySchema } from '../http/key-schema.js';
import { pageQuerySchema } from '../http/pagination.js';
import { z } from '../openapi/zod.js';
import { positiveQuantitySchema } from '../units/quantity-schema.js';
import { RESERVATION_STATES } from './sql.js';

export const reservationParamsSchema = z.object({ reservationId: z.string() });

/** D32: filters of the reservation list, each optional, paged as D31. */
export const reservationListQuerySchema = pageQuerySchema.extend({
  sku: keySchema('Only reservations of this Product').optional(),
  externalRef: keySchema('Only reservations made for this reference').optional(),
  state: z.enum(RESERVATION_STATES).optional().openapi({ description: 'Only reservations in this state' }),
});

const pickTargetSchema = z
  .union([
    z
      .object({
        transportUnitBK: keySchema(),
        luPos: keySchema(),
        loadUnitType: keySchema('Creates the LoadUnit on the spot when it does not exist').optional(),
      })
      .strict(),
    z.object({ locationId: keySchema() }).strict(),
  ])
  .openapi('PickTarget', { description: 'A LoadUnit by TransportUnit and position, or a Location' });

export const pickRequestSchema = z
  .object({
    pKey: z.string().openapi({ description: 'The PackagingUnit the reservation holds the goods on' }),
    qty: positiveQuantitySchema,
    target: pickTargetSchema,
  })
  .openapi('PickRequest');
