import { createHash, type Hash } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import { transactionParticipants, type TransactionParticipant } from '../db/tx.js';
import { ApiError, validationError } from '../http/api-error.js';
import { NDJSON } from '../http/media-types.js';
import { deleteExpiredRecord, insertClaim, selectRecord, storeResponse, type ClaimValues } from './sql.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The idempotency hash, taken while the JSON body was read so that its text need not be kept (issue 15). */
    requestHash?: string;
  }
}

export interface IdempotencyOptions {
  readonly pool: pg.Pool;
  readonly ttlSeconds: number;
  /** How long a retry waits for the original request to finish before answering 409. */
  readonly waitMs: number;
}

export interface Idempotency {
  /** A hash to feed with the JSON body's text as it is read, for a request with an Idempotency-Key. */
  readonly hashOf: (req: Request) => Hash | undefined;
  readonly before: RequestHandler;
  readonly afterError: ErrorRequestHandler;
}

const HEADER = 'idempotency-key';
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ['location', 'content-type'];
const POLL_MS = 50;

/** Thrown inside the request's transaction when another request holds the key: nothing of this one commits. */
class KeyTaken extends Error {}

const keyReused = (key: string): ApiError =>
  new ApiError(422, 'owms.common.idempotency.keyReused', `Idempotency-Key [${key}] was used for a different request`, {
    obj: [key],
  });

const inProgress = (key: string): ApiError =>
  new ApiError(
    409,
    'owms.common.idempotency.inProgress',
    `The request with Idempotency-Key [${key}] has not finished yet; retry later`,
    { obj: [key] },
  );

/** Of the method, the URL and the body as it arrived: a retry must send the same. */
function requestHasher(req: Request): Hash {
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n`);
}

function requestHash(req: Request): string {
  if (req.requestHash) return req.requestHash;
  return requestHasher(req)
    .update(req.body === undefined ? '' : JSON.stringify(req.body))
    .digest('hex');
}

function claimOf(req: Request, ttlSeconds: number): ClaimValues | undefined {
  const key = req.get(HEADER);
  if (key === undefined) return undefined;
  if (!KEY_FORMAT.test(key)) {
    throw validationError([{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  }
  // A streamed body is hashed only once read, after the claim is due; its import is all or nothing, so a retry
  // after a success gets the 409 naming the SKUs stored already.
  if (req.is(NDJSON)) {
    throw validationError([{ path: 'Idempotency-Key', message: `is not supported with a ${NDJSON} body` }]);
  }
  return {
    subject: req.principal?.subject ?? 'anonymous',
    key,
    requestHash: requestHash(req),
    method: req.method,
    path: req.originalUrl,
    ttlSeconds,
  };
}

/**
 * Issue 7: the first response to an Idempotency-Key is stored with the key, the token's subject and a hash of
 * the request; a retry gets it back without the work being done again, and the same key with another request
 * is a 422. The key is claimed inside the request's own transaction, so the work and the claim commit together
 * and a concurrent retry waits on the claim until the original has finished.
 */
export function createIdempotency({ pool, ttlSeconds, waitMs }: IdempotencyOptions): Idempotency {
  const replay = async (claim: ClaimValues, res: Response): Promise<void> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const record = await selectRecord(pool, claim.subject, claim.key);
      if (record && record.requestHash !== claim.requestHash) throw keyReused(claim.key);
      if (record?.state === 'done') {
        res
          .status(record.status ?? 200)
          .set(record.headers ?? {})
          .set('Idempotent-Replayed', 'true');
        res.send(record.body ?? '');
        return;
      }
      if (!record || Date.now() >= deadline) throw inProgress(claim.key);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  const before: RequestHandler = async (req, res, next) => {
    const claim = claimOf(req, ttlSeconds);
    if (!claim) return next();
    res.locals.idempotencyClaim = claim;
    const existing = await selectRecord(pool, claim.subject, claim.key);
    if (existing?.expired) await deleteExpiredRecord(pool, claim.subject, claim.key);
    else if (existing) return replay(claim, res);

    let committed = false;
    const participant: TransactionParticipant = {
      onBegin: async (tx) => {
        if (!committed && !(await insertClaim(tx, claim))) throw new KeyTaken();
      },
      onCommit: () => {
        committed = true;
      },
    };
    // The response is stored before it leaves, so a client that got it never meets a pending record.
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (!committed) return end(...args);
      const chunk = args[0];
      const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = res.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      storeResponse(pool, claim.subject, claim.key, { status: res.statusCode, headers, body })
        .catch((error: unknown) => req.log.error({ err: error }, 'storing the idempotent response failed'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    transactionParticipants.run(participant, next);
  };

  const afterError: ErrorRequestHandler = (error, _req, res, next) => {
    const claim = res.locals.idempotencyClaim as ClaimValues | undefined;
    if (!(error instanceof KeyTaken) || !claim) return next(error);
    replay(claim, res).catch(next);
  };

  const hashOf = (req: Request): Hash | undefined => (req.get(HEADER) === undefined ? undefined : requestHasher(req));

  return { hashOf, before, afterError };
}
