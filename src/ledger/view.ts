import { z } from '../openapi/zod.js';
import { Quantity } from '../units/quantity.js';
import { MOVEMENT_KINDS, type MovementRow } from './sql.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';

const placeSchema = z
  .union([
    z.object({ locationId: z.string() }).strict(),
    z.object({ transportUnitBK: z.string(), loadUnitPosition: z.string() }).strict(),
  ])
  .openapi('StockPlace', { description: 'A Location, or a LoadUnit by TransportUnit and position' });

/** A ledger row as `movementView` writes it (D24). */
export const movementSchema = z
  .object({
    type: z.enum(MOVEMENT_KINDS),
    quantityBefore: quantityResponseSchema,
    quantityAfter: quantityResponseSchema,
    reservedBefore: quantityResponseSchema,
    reservedAfter: quantityResponseSchema,
    from: placeSchema.optional(),
    to: placeSchema.optional(),
    reservationId: z.string().optional(),
    actor: z.string().openapi({ description: "The token's subject" }),
    requestId: z.string().optional(),
    occurredAt: z.iso.datetime(),
  })
  .strict()
  .openapi('StockMovement', { description: 'One stock change of a PackagingUnit, amounts in the smallest unit' });

/** One ledger row as clients read it: quantities in the kind's smallest unit, times in UTC. */
export function movementView(row: MovementRow): Record<string, unknown> {
  const view: Record<string, unknown> = {
    type: row.kind,
    quantityBefore: Quantity.of(row.qtyBefore, row.baseCode),
    quantityAfter: Quantity.of(row.qtyAfter, row.baseCode),
    reservedBefore: Quantity.of(row.reservedBefore, row.baseCode),
    reservedAfter: Quantity.of(row.reservedAfter, row.baseCode),
  };
  if (row.from) view.from = row.from;
  if (row.to) view.to = row.to;
  if (row.reservationId) view.reservationId = row.reservationId;
  view.actor = row.actor;
  if (row.requestId) view.requestId = row.requestId;
  view.occurredAt = row.occurredAt.toISOString();
  return view;
}
