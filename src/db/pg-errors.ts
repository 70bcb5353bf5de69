import { ApiError, validationError } from '../http/api-error.js';
import { databaseUnavailable, poolBusy, ServerError } from '../http/server-error.js';

interface PgLikeError {
  code?: string;
  constraint?: string;
  message?: string;
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

/** The connection is gone or unusable: a ROLLBACK would fail or hang, the client must be discarded. */
export function isBrokenConnection(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const failure = error as PgLikeError;
  return isConnectionFailure(failure) || failure.message === 'Query read timeout';
}

function isConnectionFailure(error: PgLikeError): boolean {
  const code = error.code ?? '';
  if (CONNECTION_ERRORS.has(code)) return true;
  // 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now; 53300: too many connections.
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300')
    return true;
  const message = error.message ?? '';
  return message.includes('Connection terminated') || message.includes('Client has encountered a connection error');
}

/**
 * pg-pool's words when a request waited its connect timeout for a pooled connection and none came free: the
 * database may be perfectly well, the instance is just busy (a failing connect says "Connection terminated").
 */
export function isPoolBusy(error: unknown): boolean {
  return (error as PgLikeError | null)?.message === 'timeout exceeded when trying to connect';
}

/**
 * Translates what PostgreSQL (or the driver) reports into the error a client should see, or undefined when
 * the failure is not a database one. Constraint violations that the services did not foresee still reach
 * the client as a conflict rather than a 500.
 */
export function databaseProblem(error: unknown): ApiError | ServerError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const failure = error as PgLikeError;
  if (isPoolBusy(failure)) return poolBusy();
  if (isBrokenConnection(failure)) return databaseUnavailable();
  // Class 22, data exceptions: a value PostgreSQL cannot store (a NUL character, an out-of-range number).
  if (failure.code?.startsWith('22')) {
    return validationError([
      {
        path: 'body',
        message: 'holds a value that cannot be stored (for example a NUL character or a number out of range)',
      },
    ]);
  }
  // 54000 program_limit_exceeded: a value too large for an index (a key of thousands of characters).
  if (failure.code === '54000') {
    return validationError([{ path: 'body', message: 'holds a value too large to be stored as a key' }]);
  }
  switch (failure.code) {
    case '55P03': // lock_not_available: lock_timeout expired
    case '57014': // query_canceled: statement_timeout expired
      return new ServerError(503, 'QueryTimeoutException', 'The database is busy; retry later', { 'Retry-After': '1' });
    case '40001':
    case '40P01':
      return new ServerError(503, 'ConcurrencyFailureException', 'Too much contention on the same data; retry', {
        'Retry-After': '1',
      });
    case '23505':
      return new ApiError(409, 'owms.common.common.alreadyExists', 'A record with the same key already exists', {
        obj: failure.constraint ? [failure.constraint] : undefined,
      });
    case '23503':
    case '23514':
    case '23P01':
      return new ApiError(409, 'owms.common.common.constraintViolated', 'The change would break a consistency rule', {
        obj: failure.constraint ? [failure.constraint] : undefined,
      });
    default:
      return undefined;
  }
}
