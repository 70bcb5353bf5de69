import type { ApiError } from '../http/api-error.js';
import { conflict, forbiddenMessageOnly, notFound, validationError } from '../http/api-error.js';

/** Message keys and texts of the products feature (spec part 7, D10-D13). */
export const productErrors = {
  notFoundBySku: (sku: string): ApiError => notFound('not.found', `No Product with SKU [${sku}] exists`),
  notFoundByPKey: (pKey: string): ApiError =>
    notFound('owms.wms.inv.product.notFoundByPKey', `No Product with pKey [${pKey}] exists`, [pKey]),
  alreadyExists: (skus: readonly string[]): ApiError =>
    conflict('owms.wms.inv.product.alreadyExists', `Products with SKU [${skus.join(', ')}] already exist`, skus),
  changedUnexpectedly: (pKey: string): ApiError =>
    conflict(
      'resource.changed.unexpectedly',
      `Product [${pKey}] was changed by someone else in the meantime; read it again and retry`,
      [pKey],
    ),
  stillInUse: (sku: string, usage: string): ApiError =>
    forbiddenMessageOnly(`Product [${sku}] cannot be deleted: it is still used by ${usage}`),
  quantityOfAnotherKind: (path: string, productKind: string): ApiError =>
    validationError([{ path, message: `must be a ${productKind} quantity like the Product's baseUnit` }]),
  unknownStackedProducts: (problems: readonly { path: string; sku: string }[]): ApiError =>
    validationError(problems.map(({ path, sku }) => ({ path, message: `unknown product '${sku}'` }))),
};
