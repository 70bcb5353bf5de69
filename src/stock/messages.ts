import { ApiError, validationError } from '../http/api-error.js';

/** The message keys of stock levels (D31), with their texts. */
export const StockMessageKeys = {
  historyExpired: 'owms.wms.inv.stock.historyExpired',
} as const;

export const stockErrors = {
  historyExpired: (at: string, keptSince: string): ApiError =>
    new ApiError(
      410,
      StockMessageKeys.historyExpired,
      `Stock at [${at}] cannot be told: the ledger is kept from [${keptSince}] on`,
      { obj: [at] },
    ),
  futureInstant: (at: string): ApiError =>
    validationError([{ path: 'at', message: `must not be in the future: ${at}` }]),
  onlyWithSku: (parameter: string): ApiError =>
    validationError([{ path: parameter, message: 'is taken only together with sku' }]),
  notWithAt: (parameter: string): ApiError =>
    validationError([
      { path: parameter, message: 'cannot be combined with at: the ledger keeps no past places of TransportUnits' },
    ]),
  onlyForTheList: (parameter: string): ApiError =>
    validationError([{ path: parameter, message: 'pages the list of every Product and is not taken with sku' }]),
  unknownGroup: (name: string): ApiError =>
    validationError([{ path: 'sourceLocationGroupNames', message: `names no LocationGroup: ${name}` }]),
};
