import type { ApiError } from '../http/api-error.js';
import { badRequest, conflict, notFound, validationError } from '../http/api-error.js';

/** The message keys of the LoadUnit feature (spec part 7, D1, D16, D17). */
export const LoadUnitMessageKeys = {
  alreadyDivided: 'owms.wms.inv.tu.alreadyDivided',
  pKeyNotExists: 'owms.wms.inv.lu.pKeyNotExists',
  alreadyAssigned: 'owms.wms.inv.lu.alreadyAssigned',
  onTuNotExists: 'owms.wms.inv.lu.onTuNotExists',
  loadUnitTypeMissing: 'owms.wms.inv.pu.loadUnitTypeMissing',
} as const;

export const loadUnitErrors = {
  alreadyDivided: (transportUnitBK: string): ApiError =>
    conflict(
      LoadUnitMessageKeys.alreadyDivided,
      `TransportUnit [${transportUnitBK}] is already divided into several LoadUnits`,
      [transportUnitBK],
    ),
  notFoundByPKey: (pKey: string): ApiError =>
    notFound(LoadUnitMessageKeys.pKeyNotExists, `LoadUnit with pKey [${pKey}] does not exist`, [pKey]),
  alreadyAssigned: (pKey: string, sku: string): ApiError =>
    badRequest(
      LoadUnitMessageKeys.alreadyAssigned,
      `LoadUnit [${pKey}] is already assigned to or carries another Product than [${sku}]`,
      [pKey, sku],
    ),
  alreadyAssignedInIntake: (line: number, transportUnitBK: string, position: string, sku: string): ApiError =>
    badRequest(
      LoadUnitMessageKeys.alreadyAssigned,
      `line ${line}: the LoadUnit at position [${position}] on TransportUnit [${transportUnitBK}] already carries ` +
        `another Product than [${sku}]`,
      [`line ${line}`, transportUnitBK, position, sku],
    ),
  notOnTransportUnit: (transportUnitBK: string, position: string): ApiError =>
    notFound(
      LoadUnitMessageKeys.onTuNotExists,
      `No LoadUnit at position [${position}] on TransportUnit [${transportUnitBK}]`,
      [transportUnitBK, position],
    ),
  loadUnitTypeMissing: (position: string, transportUnitBK: string): ApiError =>
    badRequest(
      LoadUnitMessageKeys.loadUnitTypeMissing,
      `The LoadUnit at position [${position}] on TransportUnit [${transportUnitBK}] must be created, but no loadUnitType was given`,
      [position, transportUnitBK],
    ),
  positionBlank: (): ApiError => validationError([{ path: 'luPos', message: 'must not be blank' }]),
};
