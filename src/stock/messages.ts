import { ApiError, validationError } from '../http/api-error.js';
import { ServerError } from '../http/server-error.js';

/** The message keys of stock levels (D31), with their texts. */
export const StockMessageKeys = {
  historyExpired: 'owms.wms.inv.stock.historyExpired',
} as const;

/** The exception of a reading that could not stand on a commit boundary (D40). */
export const FEED_BEHIND = 'FeedBehindException';

export const stockErrors = {
  historyExpired: (at: string, keptSince: string): ApiError =>
    new ApiError(
      410,
      StockMessageKeys.historyExpired,
      `Stock at [${at}] cannot be told: the ledger is kept from [${keptSince}] on`,
      { obj: [at] },
    ),
  asOfExpired: (asOf: number): ApiError =>
    new ApiError(
      410,
      StockMessageKeys.historyExpired,
      `Stock as of feed cursor [${asOf}] cannot be told: that history is no longer kept`,
      { obj: [String(asOf)] },
    ),
  notABoundary: (asOf: number): ApiError =>
    validationError([{ path: 'asOf', message: `is not a feedCursor this service answered: ${asOf}` }]),
  /** The figures kept holding a change the feed had not numbered yet: numbering is down or far behind (D40). */
  feedBehind: (): ServerError =>
    new ServerError(
      503,
      FEED_BEHIND,
      'The stock could not be read together with its feed position: the event feed is behind; retry later',
      { 'Retry-After': '1' },
    ),
  notWithAsOf: (): ApiError =>
    validationError([{ path: 'asOf', message: 'cannot be combined with at: at is an instant, asOf a feedCursor' }]),
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
