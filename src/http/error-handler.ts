import type { ErrorRequestHandler, Request } from 'express';
import { KindMismatchError } from '../units/quantity.js';
import { ApiError, apiErrorBody, validationError } from './api-error.js';
import { HAL_JSON } from './media-types.js';
import { stringifyJson } from '../json.js';
import { databaseProblem } from '../db/pg-errors.js';
import { internalError, ServerError, serverErrorBody } from './server-error.js';

function sendServerError(req: Request, res: Parameters<ErrorRequestHandler>[2], error: ServerError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res
    .status(error.status)
    .type('application/json')
    .send(stringifyJson(serverErrorBody(error, req.path)));
}

/**
 * The one error middleware (D6): ApiError → API-declined body; ServerError → server-declined body;
 * PostgreSQL failures → their mapped error; anything else → a generic 500 whose detail is only in the log.
 */
export const errorHandler: ErrorRequestHandler = (error: unknown, req, res, next) => {
  if (res.headersSent) return next(error);
  const mapped =
    error instanceof ApiError || error instanceof ServerError
      ? error
      : error instanceof KindMismatchError
        ? validationError([{ path: 'quantity', message: error.message }])
        : error instanceof URIError
          ? new ServerError(400, 'InvalidUrlException', 'The request path is not valid URL encoding')
          : databaseProblem(error);

  if (mapped instanceof ApiError) {
    const body = apiErrorBody(mapped);
    for (const [name, value] of Object.entries(mapped.headers)) res.setHeader(name, value);
    res.status(mapped.status);
    if (body === undefined) {
      res.end();
      return;
    }
    res.type(HAL_JSON).send(stringifyJson(body));
    return;
  }
  if (mapped instanceof ServerError) {
    // A refusal the service chose (a stream or body bound, shutting down) is no failure: one line, no stack, since a
    // flood of them would otherwise cost as much logging as answering. A database failure keeps its cause.
    if (mapped === error && mapped.status >= 500)
      req.log.warn({ exception: mapped.exception }, 'request refused: %s', mapped.message);
    else if (mapped.status >= 500) req.log.error({ err: error }, 'request failed: %s', mapped.message);
    sendServerError(req, res, mapped);
    return;
  }
  req.log.error({ err: error }, 'unexpected failure');
  sendServerError(req, res, internalError(String(req.id)));
};
