/** What an upload must keep up (D38): some bytes every so often, and a least rate over a window. */
export interface PaceBounds {
  /** The longest wait for the client's next bytes (IMPORT_STALL_TIMEOUT_MS). */
  readonly stallTimeoutMs: number;
  /** The least rate while the service waits for the client (IMPORT_MIN_BYTES_PER_SECOND; 0: none). */
  readonly minBytesPerSecond: number;
  /** The window the rate is averaged over (IMPORT_MIN_RATE_WINDOW_MS). */
  readonly rateWindowMs: number;
}

/** Why an upload is too slow, in words for its 408; the caller adds the status. */
export type SlowUpload = string;

/**
 * The pace of one upload, fed with its bytes as they come off the socket (before decompression: a gzip byte that
 * inflates to nothing yet is still a byte sent). A stall is measured from the last byte that came, so its message
 * names the real idle time; the rate only over time the service spent waiting for the client, since a client
 * ahead of its import (its bytes waiting to be read) is not slow: the window starts again whenever it is ahead.
 */
export class UploadPace {
  private lastByteAt = Date.now();
  private windowStartedAt = this.lastByteAt;
  private windowBytes = 0;

  constructor(private readonly bounds: PaceBounds) {}

  arrived(bytes: number): void {
    this.lastByteAt = Date.now();
    this.windowBytes += bytes;
  }

  /** The client's bytes were waiting to be read: the service, not the client, was behind. */
  ahead(): void {
    this.windowStartedAt = Date.now();
    this.windowBytes = 0;
  }

  /** What is wrong with the upload at `now`, or undefined while it keeps its pace. */
  slow(now = Date.now()): SlowUpload | undefined {
    const idleMs = now - this.lastByteAt;
    if (idleMs >= this.bounds.stallTimeoutMs) {
      return `The client sent nothing for ${idleMs} ms, more than IMPORT_STALL_TIMEOUT_MS (${this.bounds.stallTimeoutMs})`;
    }
    const windowMs = now - this.windowStartedAt;
    if (this.bounds.minBytesPerSecond === 0 || windowMs < this.bounds.rateWindowMs) return undefined;
    if (this.windowBytes * 1000 < this.bounds.minBytesPerSecond * windowMs) {
      return (
        `The client sent ${this.windowBytes} bytes in ${windowMs} ms, slower than IMPORT_MIN_BYTES_PER_SECOND ` +
        `(${this.bounds.minBytesPerSecond} bytes per second over ${this.bounds.rateWindowMs} ms)`
      );
    }
    this.windowStartedAt = now;
    this.windowBytes = 0;
    return undefined;
  }

  /** Milliseconds until slow() may first answer something. */
  nextCheckInMs(now = Date.now()): number {
    const stallAt = this.lastByteAt + this.bounds.stallTimeoutMs;
    const windowEndsAt =
      this.bounds.minBytesPerSecond > 0 ? this.windowStartedAt + this.bounds.rateWindowMs : Number.POSITIVE_INFINITY;
    return Math.max(1, Math.min(stallAt, windowEndsAt) - now);
  }
}
