import { STATUS_CODES } from 'node:http';

/**
 * The server-declined error (spec part 7, D6): raised before a request reaches the API logic
 * (tokens, routing, negotiation, unreadable bodies) and for unexpected failures.
 */
export class ServerError extends Error {
  override readonly name = 'ServerError';

  constructor(
    readonly status: number,
    /** The exception class name reported in the body; Spring's names where the original system uses them. */
    readonly exception: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export interface ServerErrorBody {
  timestamp: number;
  status: number;
  error: string;
  exception: string;
  message: string;
  path: string;
}

export function serverErrorBody(error: ServerError, path: string): ServerErrorBody {
  return {
    timestamp: Date.now(),
    status: error.status,
    error: STATUS_CODES[error.status] ?? 'Error',
    exception: error.exception,
    message: error.message,
    path,
  };
}

/** RFC 6750 section 3: a quoted-string may hold only printable ASCII besides the quote and backslash. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?')}"`;
}

/** The `WWW-Authenticate` challenge of a refused bearer token (RFC 6750 section 3). */
export function bearerChallenge(
  error: 'invalid_token' | 'insufficient_scope',
  description: string,
  scope?: string,
): string {
  const parts = [`error=${quoted(error)}`, `error_description=${quoted(description)}`];
  if (scope !== undefined) parts.push(`scope=${quoted(scope)}`);
  return `Bearer ${parts.join(', ')}`;
}

/** Without a token the challenge names no error (RFC 6750 section 3.1). */
export const unauthorized = (message: string, invalidToken: boolean): ServerError =>
  new ServerError(
    401,
    invalidToken ? 'InvalidBearerTokenException' : 'AuthenticationCredentialsNotFoundException',
    message,
    { 'WWW-Authenticate': invalidToken ? bearerChallenge('invalid_token', message) : 'Bearer' },
  );

export const routeNotFound = (method: string, path: string): ServerError =>
  new ServerError(404, 'NoHandlerFoundException', `No endpoint ${method} ${path}`);

export const methodNotAllowed = (method: string, allowed: readonly string[]): ServerError =>
  new ServerError(405, 'HttpRequestMethodNotSupportedException', `Request method '${method}' is not supported`, {
    Allow: allowed.join(', '),
  });

export const notAcceptable = (supported: readonly string[]): ServerError =>
  new ServerError(
    406,
    'HttpMediaTypeNotAcceptableException',
    `No acceptable representation; this resource is available as ${supported.join(', ')}`,
  );

export const unsupportedMediaType = (contentType: string, supported: readonly string[]): ServerError =>
  new ServerError(
    415,
    'HttpMediaTypeNotSupportedException',
    `Content type '${contentType}' is not supported; use ${supported.join(' or ')}`,
  );

export const unreadableBody = (detail: string): ServerError =>
  new ServerError(400, 'HttpMessageNotReadableException', `Request body is not readable: ${detail}`);

export const payloadTooLarge = (limit: string): ServerError =>
  new ServerError(413, 'PayloadTooLargeException', `Request body exceeds the limit of ${limit}`);

export const databaseUnavailable = (): ServerError =>
  new ServerError(503, 'DataAccessResourceFailureException', 'The database is unavailable; retry later', {
    'Retry-After': '5',
  });

export const poolBusy = (): ServerError =>
  new ServerError(
    503,
    'CannotGetJdbcConnectionException',
    'Every database connection of this instance is busy; retry later',
    { 'Retry-After': '1' },
  );

/**
 * Every slot of a bounded kind of work is taken (STREAM_MAX_CONCURRENT, IMPORT_MAX_CONCURRENT): a 503 to retry;
 * TaskRejectedException is Spring's name for an executor at capacity.
 */
export const tooManyAtOnce = (what: string, maxConcurrent: number): ServerError =>
  new ServerError(
    503,
    'TaskRejectedException',
    `${what} are limited to ${maxConcurrent} at once on this instance, and all are in use; retry later`,
    { 'Retry-After': '5' },
  );

export const internalError = (requestId: string): ServerError =>
  new ServerError(500, 'InternalServerError', `Unexpected error; quote request id ${requestId} when reporting it`);
