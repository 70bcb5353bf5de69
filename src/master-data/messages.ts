import { badRequest, conflict, notFound, type ApiError } from '../http/api-error.js';

/** The message keys of master data (spec part 7, D1, D14, D15), with their texts. */
export const MessageKeys = {
  locationGroupNotFoundByName: 'owms.common.common.lg.notFoundByName',
  locationIdNotExists: 'owms.wms.inv.loc.idNotExists',
  locationErpCodeNotExists: 'owms.wms.inv.loc.erpCodeNotExists',
  erpCodeAlreadyUsed: 'owms.wms.inv.loc.erpCodeAlreadyUsed',
  transportUnitBkMissing: 'owms.wms.inv.tu.bk',
  transportUnitTypeMissing: 'owms.wms.inv.tu.transportUnitType',
  transportUnitLocationMissing: 'owms.wms.inv.tu.actualLocation.erpCode',
  transportUnitAlreadyExists: 'owms.wms.inv.tu.alreadyExists',
  transportUnitBkNotExists: 'owms.wms.inv.tu.bkNotExists',
} as const;

export const locationGroupNotFound = (name: string): ApiError =>
  notFound(MessageKeys.locationGroupNotFoundByName, `LocationGroup with name [${name}] not found`, [name]);

export const locationIdNotFound = (locationId: string): ApiError =>
  notFound(MessageKeys.locationIdNotExists, `Location with locationId [${locationId}] does not exist`, [locationId]);

export const erpCodeNotFound = (erpCode: string): ApiError =>
  notFound(MessageKeys.locationErpCodeNotExists, `Location with erpCode [${erpCode}] does not exist`, [erpCode]);

export const erpCodeAlreadyUsed = (erpCode: string): ApiError =>
  conflict(MessageKeys.erpCodeAlreadyUsed, `The erpCode [${erpCode}] is already used by another Location`, [erpCode]);

export const transportUnitBkMissing = (): ApiError =>
  badRequest(MessageKeys.transportUnitBkMissing, 'The TransportUnit is missing the business key (transportUnitBK)');

export const transportUnitTypeMissing = (): ApiError =>
  badRequest(MessageKeys.transportUnitTypeMissing, 'The TransportUnit is missing the type (transportUnitType)');

export const transportUnitLocationMissing = (): ApiError =>
  badRequest(
    MessageKeys.transportUnitLocationMissing,
    'The TransportUnit is missing the actual location (actualLocation.erpCode or actualLocation.locationId)',
  );

export const transportUnitAlreadyExists = (bk: string): ApiError =>
  conflict(MessageKeys.transportUnitAlreadyExists, `TransportUnit with business key [${bk}] already exists`, [bk]);

export const transportUnitNotFound = (bk: string): ApiError =>
  notFound(MessageKeys.transportUnitBkNotExists, `TransportUnit with business key [${bk}] does not exist`, [bk]);
