import { type ApiError, conflict, notFound } from '../http/api-error.js';

/** Message keys and texts of the PackagingUnit feature (spec part 7, D18-D22). */
export const packagingUnitErrors = {
  notFoundByPKey: (pKey: string): ApiError =>
    notFound('owms.wms.inv.pu.pKeyNotExists', `No PackagingUnit with pKey [${pKey}] exists`, [pKey]),
  noneOnLocation: (sku: string, location: string): ApiError =>
    notFound('owms.wms.inv.pu.noPUOnLocation', `No PackagingUnit of Product [${sku}] is at [${location}]`, [
      sku,
      location,
    ]),
  reserved: (pKeyOrSku: string): ApiError =>
    conflict(
      'owms.wms.inv.pu.reserved',
      `Reserved stock of [${pKeyOrSku}] cannot be removed; release the reservation first`,
      [pKeyOrSku],
    ),
};
