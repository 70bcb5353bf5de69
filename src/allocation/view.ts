import { z } from '../openapi/zod.js';
import type { AllocationResult } from './service.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';

/** One element of the allocation result, as `allocationView` writes it. */
export const allocationResultSchema = z
  .object({
    transportUnitBK: z.string(),
    loadUnitPosition: z.string(),
    sku: z.string(),
    actualErpCode: z.string().optional(),
    qtyAllocated: quantityResponseSchema,
    reservationId: z.string().openapi({ description: 'The reservation to release with release-reservation' }),
  })
  .strict()
  .openapi('AllocationResult', { description: 'Where an allocated quantity lies: one LoadUnit' });

/** An allocation result element with the spec's fields in the spec's order. */
export function allocationView(result: AllocationResult): Record<string, unknown> {
  return {
    transportUnitBK: result.transportUnitBK,
    loadUnitPosition: result.loadUnitPosition,
    sku: result.sku,
    ...(result.actualErpCode !== null && { actualErpCode: result.actualErpCode }),
    qtyAllocated: result.qtyAllocated,
    reservationId: result.reservationId,
  };
}
