import type { Request } from 'express';
import type { BodyLimits } from '../config.js';
import type { TransactionParticipant } from '../db/tx.js';
import { clientGone, readLines, type BodyLine } from './body.js';
import { tooManyAtOnce } from './server-error.js';

/**
 * The answer to a body past its deadline must be written before Node's own request timeout closes the connection
 * (its check runs every second), or the client would get no answer at all (issue 26).
 */
const ANSWER_MARGIN_MS = 1000;

/** What an import's work receives: its lines as they arrive, and how long its statements may take. */
export interface StreamedBody {
  readonly lines: AsyncIterable<BodyLine>;
  readonly timeoutMs: number;
  /**
   * Aborted when the client goes away before its answer is written, in any phase (D38): the work's transaction
   * (withTransaction's `signal`) then rolls back at once, its statement cancelled.
   */
  readonly signal: AbortSignal;
  /** The request's idempotency claim, for the work's transaction (withTransaction's `participant`). */
  readonly participant: TransactionParticipant | undefined;
}

/**
 * The instance's streamed imports (NDJSON bodies of any operation), bounded together. Each holds a connection and
 * its transaction for as long as its client sends, so slow clients could otherwise take the pool (issue 14); and
 * each ends when its client or its time does (issue 26): a client that stalls for IMPORT_STALL_TIMEOUT_MS or whose
 * body has not arrived by HTTP_REQUEST_TIMEOUT_MS gets a 408, one that leaves ends its body, and the work's
 * transaction then rolls back and its slot is free.
 */
export class StreamedImports {
  private running = 0;

  constructor(
    private readonly bodies: BodyLimits,
    /** HTTP_REQUEST_TIMEOUT_MS: the body's deadline, and the bound of each of the import's statements. */
    private readonly requestTimeoutMs: number,
  ) {}

  /** Runs `work` on the request's lines in one of the slots; a request finding none free is a 503. */
  async run<T>(req: Request, work: (body: StreamedBody) => Promise<T>): Promise<T> {
    if (this.running >= this.bodies.importMaxConcurrent) {
      req.resume();
      throw tooManyAtOnce('Streamed imports', this.bodies.importMaxConcurrent);
    }
    this.running++;
    const gone = new AbortController();
    const res = req.res!;
    // The request's own 'close' comes once its body is read, so only the response's tells of a client leaving later.
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort(clientGone());
    };
    res.once('close', onClose);
    try {
      const lines = readLines(req, {
        limit: this.bodies.importLimit,
        lineLimit: this.bodies.limit,
        pace: {
          stallTimeoutMs: this.bodies.importStallTimeoutMs,
          minBytesPerSecond: this.bodies.importMinBytesPerSecond,
          rateWindowMs: this.bodies.importMinRateWindowMs,
        },
        onBytes: req.bodyHasher && ((chunk) => req.bodyHasher!.update(chunk)),
        deadline: {
          // A request timeout under ten seconds keeps nine tenths of itself for the body, not all but a second.
          at: Date.now() + this.requestTimeoutMs - Math.min(ANSWER_MARGIN_MS, this.requestTimeoutMs / 10),
          ms: this.requestTimeoutMs,
        },
      });
      return await work({
        lines,
        timeoutMs: this.requestTimeoutMs,
        signal: gone.signal,
        participant: req.transactionParticipant,
      });
    } finally {
      res.off('close', onClose);
      this.running--;
    }
  }
}
