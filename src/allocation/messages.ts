import { conflict, notFound, type ApiError } from '../http/api-error.js';

/** Message keys and texts of allocation and the reservation's life (D23, D32). */
export const allocationErrors = {
  insufficient: (sku: string, requested: string, available: string): ApiError =>
    conflict(
      'owms.wms.inv.alloc.insufficient',
      `Only ${available} of Product [${sku}] can be allocated, ${requested} were requested`,
      [sku, requested, available],
    ),
  reservationNotFound: (reservationId: string): ApiError =>
    notFound('owms.wms.inv.res.notFound', `No reservation [${reservationId}] was ever issued`, [reservationId]),
  notActive: (reservationId: string, state: string): ApiError =>
    conflict('owms.wms.inv.res.notActive', `Reservation [${reservationId}] is ${state}, not ACTIVE`, [
      reservationId,
      state,
    ]),
  overpick: (reservationId: string, pKey: string, requested: string, held: string): ApiError =>
    conflict(
      'owms.wms.inv.res.overpick',
      `Reservation [${reservationId}] holds ${held} on PackagingUnit [${pKey}], ${requested} were to be picked`,
      [reservationId, pKey, requested, held],
    ),
};
