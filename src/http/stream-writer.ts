import type { Request, Response } from 'express';
import client from 'prom-client';

/** What every outgoing stream may hold and how long it may stay unable to send (D39). */
export interface StreamLimits {
  /** Bytes a stream may hold unsent beyond what its response accepted; more makes its writer wait. */
  readonly bufferBytes: number;
  /**
   * Bytes all streams of the instance may hold unsent together; beyond that each holds at most a chunk more than its
   * response took, so many clients that read nothing cannot each take `bufferBytes`.
   */
  readonly totalBufferBytes: number;
  /** A response that takes nothing for this long, while bytes wait for it, is closed. */
  readonly stallTimeoutMs: number;
}

/** The kinds of stream, as the metrics label them. */
export type StreamKind = 'events' | 'feed' | 'list';

/**
 * Why a stream ended before its writer finished: the client went away, it stalled, its token expired, or the
 * instance is shutting down.
 */
export type StreamEnd = 'closed' | 'stalled' | 'expired' | 'shutdown';

/** Small writes are gathered into chunks of about this size: a write per row or event would cost a syscall each. */
const CHUNK_BYTES = 64 * 1024;
/**
 * A text this long goes out as it is, after what was gathered before it, not joined to it: the join would be a copy
 * per stream of an event every stream sends (issue 33: such copies, promoted while queued, were the instance's
 * growth with streams that do not read).
 */
const WHOLE_BYTES = 16 * 1024;
/**
 * What a producer reads ahead of its writer at once, as a part of `bufferBytes`: a stream that stalled holds its
 * read-ahead besides its queue, and the kernel takes megabytes from a socket before it stops taking, so a stream
 * reads, renders and throws away many of these before it stalls.
 */
const READ_AHEAD_PART = 4;

function byteLength(text: string | Buffer): number {
  return typeof text === 'string' ? Buffer.byteLength(text) : text.length;
}

/** What the instance's streams hold unsent together (D39), counted by their writers. */
export interface SharedBuffer {
  held: number;
}

/** setTimeout takes at most 2^31 - 1 ms; a later expiry is checked again when that runs out. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The one way a body is streamed out (D39). It hands text to the response only while the response takes it
 * (`write()` true, else until 'drain'), so compression and the socket hold at most their own buffers; what the
 * stream has to say beyond that waits here, and `send` makes its producer wait once that passes `bufferBytes`.
 * A response that takes nothing for `stallTimeoutMs` while text waits is destroyed. `ended` fires with the reason
 * whenever the stream must stop: producers waiting on anything else (the feed) listen to it.
 */
export class StreamWriter {
  private gathered = '';
  private readonly queue: (string | Buffer)[] = [];
  private queuedBytes = 0;
  private accepting = true;
  private stallTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly waiting: (() => void)[] = [];
  private readonly abort = new AbortController();
  private reason: StreamEnd | undefined;

  constructor(
    private readonly res: Response,
    private readonly limits: StreamLimits,
    private readonly onStall: () => void,
    expiresAtMs: number | undefined,
    private readonly shared: SharedBuffer = { held: 0 },
  ) {
    res.once('close', () => this.end('closed'));
    // The compression middleware takes 'drain' listeners on its gzip stream: that is the one that fills first.
    res.on('drain', () => this.pump());
    if (expiresAtMs !== undefined) this.expireAt(expiresAtMs);
  }

  /** Aborts when the stream must stop; `endedBy` says why. */
  get ended(): AbortSignal {
    return this.abort.signal;
  }

  get endedBy(): StreamEnd | undefined {
    return this.reason;
  }

  /** Bytes waiting here for the response to take them. */
  get unsentBytes(): number {
    return this.queuedBytes + this.gathered.length;
  }

  /**
   * Queues `text` and resolves once what waits is within `bufferBytes` again (within a chunk while the instance's
   * streams together hold more than `totalBufferBytes`): true, or false when the stream ended (the producer stops).
   * Bytes (an encoded batch) and long texts go out as they are, after what was gathered before them.
   */
  async send(text: string | Buffer): Promise<boolean> {
    if (this.reason) return false;
    if (typeof text === 'string' && text.length < WHOLE_BYTES) {
      this.gathered += text;
      if (this.gathered.length >= CHUNK_BYTES) this.enqueue();
    } else {
      this.enqueue();
      this.put(text);
    }
    while (this.holdsTooMuch() && !this.reason) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    return !this.reason;
  }

  /**
   * Resolves once `bytes` more could be queued without making the producer wait: true, or false when the stream
   * ended. A producer asks before it reads ahead, so a stream whose client takes nothing holds no read-ahead while
   * it waits for its stall (issue 33: what it held was promoted garbage by then).
   */
  async ready(bytes: number): Promise<boolean> {
    while (this.holdsTooMuch(bytes) && !this.reason) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    return !this.reason;
  }

  /**
   * Only a stream whose response takes nothing now holds a queue: it waits for 'drain' (or its stall) either way,
   * so waiting on the instance's total never slows a stream that reads.
   */
  private holdsTooMuch(more = 0): boolean {
    if (this.queuedBytes === 0) return false;
    if (this.queuedBytes + more > this.limits.bufferBytes) return true;
    return this.shared.held + more > this.limits.totalBufferBytes;
  }

  /**
   * Hands on what was gathered: a batch of Server-Sent Events reaches the client at once (an event stream compresses
   * each batch whole itself, src/http/gzip-frames.ts).
   */
  flush(): void {
    this.enqueue();
  }

  /** Waits until everything queued is handed to the response (or the stream ended): true when it was. */
  async drained(): Promise<boolean> {
    this.enqueue();
    while (this.queue.length > 0 && !this.reason) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    return !this.reason;
  }

  /** Stops the stream for `reason`; the first reason counts. */
  end(reason: StreamEnd): void {
    if (this.reason) return;
    this.reason = reason;
    clearTimeout(this.stallTimer);
    clearTimeout(this.expiryTimer);
    this.gathered = '';
    this.queue.length = 0;
    this.shared.held -= this.queuedBytes;
    this.queuedBytes = 0;
    this.abort.abort();
    this.wakeProducers();
    if (reason === 'stalled') {
      this.onStall();
      this.res.destroy();
    }
  }

  private enqueue(): void {
    if (this.gathered === '' || this.reason) return;
    const text = this.gathered;
    this.gathered = '';
    this.put(text);
  }

  private put(text: string | Buffer): void {
    if (this.reason) return;
    if (this.accepting && this.queue.length === 0) this.hand(text);
    else {
      this.queue.push(text);
      const bytes = byteLength(text);
      this.queuedBytes += bytes;
      this.shared.held += bytes;
    }
  }

  private hand(text: string | Buffer): void {
    this.accepting = this.res.write(text);
    if (!this.accepting && !this.stallTimer) {
      this.stallTimer = setTimeout(() => this.end('stalled'), this.limits.stallTimeoutMs);
    }
  }

  private pump(): void {
    if (this.reason) return;
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    this.accepting = true;
    while (this.accepting && this.queue.length > 0) {
      const text = this.queue.shift()!;
      const bytes = byteLength(text);
      this.queuedBytes -= bytes;
      this.shared.held -= bytes;
      this.hand(text);
    }
    this.wakeProducers();
  }

  private wakeProducers(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  private expireAt(expiresAtMs: number): void {
    const inMs = expiresAtMs - Date.now();
    if (inMs <= 0) {
      this.end('expired');
      return;
    }
    this.expiryTimer = setTimeout(() => this.expireAt(expiresAtMs), Math.min(inMs, MAX_TIMER_MS));
    this.expiryTimer.unref();
  }
}

/**
 * Every open outgoing stream of the instance: each gets its writer here, with the limits, the stall metric and
 * log, the end at its token's expiry, and the end of all at shutdown.
 */
export class OutgoingStreams {
  private readonly writers = new Map<StreamWriter, StreamKind>();
  private readonly stalled: client.Counter<'stream'>;
  private readonly shuttingDown = new AbortController();
  private readonly shared: SharedBuffer = { held: 0 };

  constructor(
    readonly limits: StreamLimits,
    registry: client.Registry,
    shutdown?: AbortSignal,
  ) {
    this.stalled = new client.Counter({
      name: 'inventory_stream_connections_stalled_total',
      help: 'Streams (event streams, feed pages, lists) closed because their client took nothing for STREAM_STALL_MS',
      labelNames: ['stream'],
      registers: [registry],
    });
    shutdown?.addEventListener('abort', () => this.endAll(), { once: true });
  }

  /** About how many bytes of rows or events a producer reads and renders ahead of its writer at once. */
  get readAheadBytes(): number {
    return Math.floor(this.limits.bufferBytes / READ_AHEAD_PART);
  }

  /** Aborts when the instance starts to shut down: a long poll answers what it has. */
  get stopping(): AbortSignal {
    return this.shuttingDown.signal;
  }

  /**
   * A writer for `res`. An event stream or a list ends when the token of `req` does (a feed page is short, and a
   * long poll's wait ends there); an event stream ends at shutdown (a list or page finishes as any request does).
   */
  open(req: Request, res: Response, kind: StreamKind): StreamWriter {
    const onStall = (): void => {
      this.stalled.inc({ stream: kind });
      req.log.warn(
        { stream: kind, stallMs: this.limits.stallTimeoutMs, bufferBytes: this.limits.bufferBytes },
        'stream closed: its client took nothing within STREAM_STALL_MS',
      );
    };
    const expiresAtMs = kind === 'feed' ? undefined : req.principal?.expiresAtMs;
    const writer = new StreamWriter(res, this.limits, onStall, expiresAtMs, this.shared);
    if (kind === 'events' && this.stopping.aborted) writer.end('shutdown');
    this.writers.set(writer, kind);
    writer.ended.addEventListener('abort', () => this.writers.delete(writer), { once: true });
    res.once('finish', () => this.writers.delete(writer));
    return writer;
  }

  get count(): number {
    return this.writers.size;
  }

  /** Shutdown: event streams end now instead of holding the instance until its deadline; long polls answer. */
  endAll(): void {
    this.shuttingDown.abort();
    for (const [writer, kind] of [...this.writers]) if (kind === 'events') writer.end('shutdown');
  }
}
