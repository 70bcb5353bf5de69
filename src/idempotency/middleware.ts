import { createHash, type Hash } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import type { TransactionParticipant } from '../db/tx.js';
import { ApiError, validationError } from '../http/api-error.js';
import { NDJSON } from '../http/media-types.js';
import { deleteExpiredRecord, insertClaim, selectRecord, storeResponse, tryLockKey, type ClaimValues } from './sql.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The idempotency hash, taken while the JSON body was read so that its text need not be kept (issue 15). */
    requestHash?: string;
    /** A streamed body's idempotency hash, fed with its bytes as its import reads them (D38). */
    bodyHasher?: Hash;
    /** The request's claim, which its route passes to its writing transaction (TransactionOptions.participant). */
    transactionParticipant?: TransactionParticipant;
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

/** A claim whose body streams (D38): its hash is known only once its import has read it. */
interface Claim extends ClaimValues {
  requestHash: string;
  readonly streamed: boolean;
}

function claimOf(req: Request, ttlSeconds: number): Claim | undefined {
  const key = req.get(HEADER);
  if (key === undefined) return undefined;
  if (!KEY_FORMAT.test(key)) {
    throw validationError([{ path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  }
  const streamed = req.is(NDJSON) !== false;
  return {
    streamed,
    subject: req.principal?.subject ?? 'anonymous',
    key,
    requestHash: streamed ? '' : requestHash(req),
    method: req.method,
    path: req.originalUrl,
    ttlSeconds,
  };
}

/** The hash of a streamed body a retry sends, read off whole: of the bytes as they arrived, as its import hashes. */
async function hashOfWholeBody(req: Request): Promise<string> {
  const hasher = requestHasher(req);
  for await (const chunk of req as AsyncIterable<Buffer>) hasher.update(chunk);
  return hasher.digest('hex');
}

/**
 * Issue 7: the first response to an Idempotency-Key is stored with the key, the token's subject and a hash of
 * the request; a retry gets it back without the work being done again, and the same key with another request
 * is a 422. The key is claimed inside the request's own transaction, so the work and the claim commit together
 * and a concurrent retry waits on the claim until the original has finished.
 */
export function createIdempotency({ pool, ttlSeconds, waitMs }: IdempotencyOptions): Idempotency {
  const replay = async (claim: Claim, res: Response): Promise<void> => {
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

  /** A streamed body is read off and hashed first: whether it is the same request is known only then. */
  const replayAfterBody = async (claim: Claim, req: Request, res: Response): Promise<void> => {
    if (claim.requestHash === '') claim.requestHash = await hashOfWholeBody(req);
    await replay(claim, res);
  };

  /**
   * D38: a streamed body's claim. While its import runs, the key is held by a transaction-level advisory lock (on
   * every instance), and a retry meanwhile is a 409 at once rather than a wait of minutes holding a connection;
   * the claim itself is written with the body's hash once the import has read it, just before commit.
   */
  const streamedParticipant = (claim: Claim, req: Request, onCommit: () => void): TransactionParticipant => {
    const hasher = requestHasher(req);
    req.bodyHasher = hasher;
    return {
      onBegin: async (tx) => {
        if (!(await tryLockKey(tx, claim.subject, claim.key))) {
          req.resume();
          throw inProgress(claim.key);
        }
        if (await selectRecord(tx, claim.subject, claim.key)) throw new KeyTaken();
      },
      onBeforeCommit: async (tx) => {
        claim.requestHash = hasher.digest('hex');
        if (!(await insertClaim(tx, claim))) throw new KeyTaken();
      },
      onCommit,
    };
  };

  const before: RequestHandler = async (req, res, next) => {
    const claim = claimOf(req, ttlSeconds);
    if (!claim) return next();
    res.locals.idempotencyClaim = claim;
    const existing = await selectRecord(pool, claim.subject, claim.key);
    if (existing?.expired) await deleteExpiredRecord(pool, claim.subject, claim.key);
    else if (existing) return replayAfterBody(claim, req, res);

    let committed = false;
    const participant: TransactionParticipant = claim.streamed
      ? streamedParticipant(claim, req, () => (committed = true))
      : {
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
    req.transactionParticipant = participant;
    next();
  };

  const afterError: ErrorRequestHandler = (error, req, res, next) => {
    const claim = res.locals.idempotencyClaim as Claim | undefined;
    if (!(error instanceof KeyTaken) || !claim) return next(error);
    replayAfterBody(claim, req, res).catch(next);
  };

  const hashOf = (req: Request): Hash | undefined => (req.get(HEADER) === undefined ? undefined : requestHasher(req));

  return { hashOf, before, afterError };
}
