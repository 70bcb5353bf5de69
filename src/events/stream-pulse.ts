import type { FeedReader } from './feed-reader.js';

/**
 * D39: one timer for all of an instance's event streams. A waiting stream wakes at the next pulse and writes what
 * arrived meanwhile as one batch (a thousand streams cost their writes and zlib calls per batch, not per event), or
 * finds nothing new and checks its heartbeat. Pulses come every `intervalMs` while any stream waits, and at once
 * when the reader holds the first event after a quiet spell or has read a full page. A timer, a promise and a reader listener per stream
 * and wait cost a thousand streams more than their writes did.
 */
export class StreamPulse {
  private waiting = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private lastBeat = 0;

  constructor(
    private readonly intervalMs: number,
    reader: Pick<FeedReader, 'onAdvanced'>,
  ) {
    // A full page means a bulk load's events: the reader reads page after page and its window (20,000 events)
    // lasts a fraction of a pulse, so the streams take them at once instead of falling out of the window and
    // reading each page again themselves (issue 33: a sku= stream behind a 1,000,000-unit intake got its move
    // 15.6 s after it was numbered).
    reader.onAdvanced((_through, full) => this.schedule(full ? 0 : this.lastBeat + this.intervalMs - Date.now()));
  }

  /** A stream's wait for the next pulse; it also ends at once when `stop` aborts. */
  follower(stop: AbortSignal): () => Promise<void> {
    let wake: (() => void) | undefined;
    stop.addEventListener(
      'abort',
      () => {
        if (!wake) return;
        this.waiting.delete(wake);
        wake();
      },
      { once: true },
    );
    return () => {
      if (stop.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        wake = resolve;
        this.waiting.add(resolve);
        this.schedule(this.intervalMs);
      });
    };
  }

  /** Beats in `inMs` (at once when not positive), unless a beat is due sooner or nobody waits. */
  private schedule(inMs: number): void {
    if (this.waiting.size === 0) return;
    const at = Date.now() + Math.max(0, inMs);
    if (this.timer && this.dueAt <= at) return;
    clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(() => this.beat(), at - Date.now());
    this.timer.unref();
  }

  private beat(): void {
    this.timer = undefined;
    this.lastBeat = Date.now();
    const woken = this.waiting;
    this.waiting = new Set();
    for (const wake of woken) wake();
  }
}
