import type { AllocationResult } from './service.js';

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
