import { conflict, notFound, type ApiError } from '../http/api-error.js';

/** Message keys and texts of allocation (D23). */
export const allocationErrors = {
  insufficient: (sku: string, requested: string, available: string): ApiError =>
    conflict(
      'owms.wms.inv.alloc.insufficient',
      `Only ${available} of Product [${sku}] can be allocated, ${requested} were requested`,
      [sku, requested, available],
    ),
  reservationNotFound: (reservationId: string): ApiError =>
    notFound('owms.wms.inv.res.notFound', `No reservation [${reservationId}] was ever issued`, [reservationId]),
};
