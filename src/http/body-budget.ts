import type { Response } from 'express';
import { ServerError } from './server-error.js';

const budgetExhausted = (): ServerError =>
  new ServerError(503, 'TooManyLargeBodiesException', 'Too many large request bodies are being handled; retry later', {
    'Retry-After': '5',
  });

/** What one body holds of the budget, from its turn until its answer is sent. */
export interface BodyShare {
  /**
   * Counts `bytes` more as held (a streamed body keeping the items it has read); resolves once they fit, or
   * rejects with a 503 after waiting the budget's longest wait. The body that came first never waits.
   */
  grow(bytes: number): Promise<void>;
}

interface Waiting {
  readonly share: Share;
  /** Whether the share grows (its body is read already), or waits for its turn. */
  readonly grows: boolean;
  readonly size: number;
  readonly admit: () => void;
  /** Stops waiting without counting anything: the response has closed. */
  readonly drop: () => void;
}

interface Share extends BodyShare {
  size: number;
}

/**
 * The bodies being read and handled at once add up to at most `capacity` bytes. A body read whole counts at its
 * declared length or, unknown, at its limit; a body read as it arrives counts what it holds: a small share to begin
 * with (a piece and the item being read), grown by the items it keeps (issue 39). A request that would go beyond
 * waits, in arrival order, before its body is read, and a growing body waits for the ones before it to finish; the
 * first of them always goes on, so none waits for ever. What a body counts lasts until its answer is sent: the
 * parsed values live that long, at many times the body's size (issue 15).
 */
export class BodyBudget {
  private used = 0;
  /** The bodies holding a share, in the order of their turns. */
  private readonly running: Share[] = [];
  private readonly waiting: Waiting[] = [];

  /**
   * `maxWaitMs` bounds each wait: a client holding the budget (a slow upload) then delays the others by a clear 503
   * to retry, not by minutes of silence.
   */
  constructor(
    private readonly capacity: number,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Resolves with the request's share once it may read its body, or rejects with a 503 after waiting `maxWaitMs`;
   * the share is given back when the response closes.
   */
  take(size: number, res: Response): Promise<BodyShare> {
    const share: Share = { size: 0, grow: (bytes) => this.grow(share, bytes) };
    return new Promise((resolve, reject) => {
      let admitted = false;
      this.wait(share, false, size, reject, () => {
        admitted = true;
        this.running.push(share);
        resolve(share);
      });
      res.once('close', () => {
        if (admitted) {
          this.used -= share.size;
          this.running.splice(this.running.indexOf(share), 1);
        }
        // A client that left while waiting (or while its share grew) waits no more.
        for (const waiting of this.waiting.filter((one) => one.share === share)) waiting.drop();
        this.admitWaiting();
      });
      this.admitWaiting();
    });
  }

  private grow(share: Share, bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.wait(share, true, bytes, reject, resolve);
      this.admitWaiting();
    });
  }

  private wait(share: Share, grows: boolean, size: number, reject: (error: Error) => void, then: () => void): void {
    const giveUp = setTimeout(() => {
      this.leave(entry);
      this.admitWaiting();
      reject(budgetExhausted());
    }, this.maxWaitMs);
    const entry: Waiting = {
      share,
      grows,
      size,
      admit: () => {
        clearTimeout(giveUp);
        this.used += size;
        share.size += size;
        then();
      },
      drop: () => {
        clearTimeout(giveUp);
        this.leave(entry);
        // A growing body goes on to meet its closed response; one waiting for its turn is never read.
        if (grows) then();
      },
    };
    // A growing body goes before the bodies still waiting for their turn: it holds its share already.
    const firstTurn = this.waiting.findIndex((one) => !one.grows);
    if (grows && firstTurn >= 0) this.waiting.splice(firstTurn, 0, entry);
    else this.waiting.push(entry);
  }

  private leave(entry: Waiting): void {
    const index = this.waiting.indexOf(entry);
    if (index >= 0) this.waiting.splice(index, 1);
  }

  private admitWaiting(): void {
    for (;;) {
      const next = this.waiting[0];
      if (!next) return;
      // The first body always goes on, and a turn is given when nothing runs, so no body waits for ever.
      const first = next.grows ? next.share === this.running[0] : this.running.length === 0;
      if (!first && this.used + next.size > this.capacity) return;
      this.waiting.shift();
      next.admit();
    }
  }
}
