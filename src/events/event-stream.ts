import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Request, Response } from 'express';
import { GzipFrames, SharedDeflate } from '../http/gzip-frames.js';
import { EVENT_STREAM } from '../http/media-types.js';
import { tooManyAtOnce } from '../http/server-error.js';
import type { OutgoingStreams, StreamWriter } from '../http/stream-writer.js';
import type { FeedFilter } from './feed-filter.js';
import { readSizeFor, type FeedReader } from './feed-reader.js';
import { filterKey, SharedBatches, type Batch } from './shared-batches.js';
import { StreamPulse } from './stream-pulse.js';

/** How soon a browser's EventSource reconnects after the stream ends (the `retry:` field), in milliseconds. */
const RECONNECT_MS = 2000;
/**
 * The shortest time between two writes of the streams while events keep coming; the first event after a quiet
 * spell goes out at once. Each write of a stream is a zlib call and a socket write, what 1,000 streams cost the
 * instance (scenario 18, bench/notes.md); D39 wants an event at its reader within 1 s of being numbered.
 */
const PULSE_MS = 250;
/** How long a stream passes batches from the window before it lets the event loop take a turn. */
const SLICE_MS = 10;
/** How soon a quiet filtered stream tells its reader the position it has read the feed through. */
const POSITION_MS = 1000;
/** The first take of a stream, before it knows how large the events are: a few, then about a buffer's worth. */
const UNSIZED_READ = 8;

export interface EventStreamSettings {
  /** Streams a process keeps open at once; one more is a 503 with Retry-After. */
  readonly maxConcurrent: number;
  /** A comment after this long without a write, so proxies and browsers see the connection is alive. */
  readonly heartbeatMs: number;
  /** The gzip level of streams whose client accepts gzip (COMPRESSION_LEVEL). */
  readonly compressionLevel: number;
}

/** What a stream writes, as its client takes it: text, or gzip frames around segments shared by all streams. */
type Encode = (text: string) => string | Buffer;

/** A stream's encoding without compression: it writes each event's shared block as it is. */
const asText: Encode = (text) => text;

/** Where a stream starts and what it sends. */
export interface StreamStart {
  /** The feed position it continues after (checked already: a bad cursor got its 400 or 410 before the 200). */
  readonly after: number;
  /** The most events it takes from the feed at once. */
  readonly limit: number;
  readonly filter: FeedFilter;
}

/**
 * A block with an id and no data: EventSource takes it as its last event id and dispatches nothing. It tells a
 * filtered reader how far the whole feed was read, so its reconnect resumes there (the opening one: where a new
 * stream starts). Events a reconnect reads again between an older id and there matched no filter: none repeats.
 */
function position(cursor: number): string {
  return `id: ${cursor}\n\n`;
}

const LAST_WORDS: Partial<Record<string, string>> = {
  expired: ': the token expired; reconnect with a new one\n\n',
  shutdown: ': this instance is stopping; reconnect\n\n',
};

/**
 * D33, D39: the feed of D29 as Server-Sent Events. Every stream takes its events from the instance's one
 * FeedReader (from the database only while it is behind the reader's window) and writes them through its
 * StreamWriter: a stream that does not keep up waits on its own writer, and is closed when it stalls, while the
 * reader and the other streams go on. An idle stream holds no database connection, only its socket.
 */
export class EventStreams {
  private active = 0;
  private readonly pulse: StreamPulse;
  private readonly deflate: SharedDeflate;
  private readonly batches = new SharedBatches();

  constructor(
    private readonly settings: EventStreamSettings,
    private readonly reader: FeedReader,
    private readonly outgoing: OutgoingStreams,
  ) {
    this.pulse = new StreamPulse(PULSE_MS, reader);
    this.deflate = new SharedDeflate(settings.compressionLevel);
  }

  get open(): number {
    return this.active;
  }

  /** Throws the 503 when every stream this process may keep is open. */
  admit(): void {
    if (this.active >= this.settings.maxConcurrent) {
      throw tooManyAtOnce('Event streams', this.settings.maxConcurrent);
    }
  }

  /**
   * Streams until the client goes away, stalls, its token expires or the instance stops. A cursor that falls out
   * of the kept events while its reader lags ends the stream: the reconnect with Last-Event-ID then gets the 410.
   */
  async send(req: Request, res: Response, from: StreamStart): Promise<void> {
    this.admit();
    this.active++;
    const writer = this.outgoing.open(req, res, 'events');
    const unfollow = this.reader.follow(from.after);
    const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip' ? new GzipFrames(this.deflate) : undefined;
    res.setHeader('Vary', 'Accept-Encoding');
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    const encode: Encode = gzip ? (text) => gzip.frame(text) : asText;
    try {
      await this.write(res, writer, encode, from);
    } catch (error) {
      // The status is sent: a failed page read can only end the stream, and the browser reconnects.
      req.log.warn({ err: error }, 'event stream ended: a page could not be read');
    } finally {
      unfollow();
      this.active--;
      this.finish(res, writer, encode, gzip);
    }
  }

  private finish(res: Response, writer: StreamWriter, encode: Encode, gzip: GzipFrames | undefined): void {
    if (res.destroyed) return;
    const lastWords = LAST_WORDS[writer.endedBy ?? ''];
    if (lastWords) res.write(encode(lastWords));
    if (gzip) res.write(gzip.end());
    res.end();
  }

  private async sendBatch(writer: StreamWriter, encode: Encode, batch: Batch): Promise<boolean> {
    if (encode !== asText) return writer.send(encode(batch.text));
    for (const frame of batch.frames) if (!(await writer.send(frame))) return false;
    return true;
  }

  private async write(
    res: Response,
    writer: StreamWriter,
    encode: Encode,
    { after, limit, filter }: StreamStart,
  ): Promise<void> {
    res.status(200);
    res.setHeader('Content-Type', `${EVENT_STREAM}; charset=utf-8`);
    res.setHeader('Cache-Control', 'no-cache');
    // Proxies that buffer answers (nginx) would hold the events back.
    res.setHeader('X-Accel-Buffering', 'no');
    const nextPulse = this.pulse.follower(writer.ended);
    const batchKey = filterKey(filter);
    let cursor = after;
    let sentId = cursor;
    await writer.send(encode(`retry: ${RECONNECT_MS}\n${position(cursor)}`));
    writer.flush();
    let lastWrite = Date.now();
    let size = Math.min(limit, UNSIZED_READ);
    let sliceStarted = performance.now();
    while (!writer.ended.aborted) {
      const read = size;
      const { entries, expired } = await this.reader.entriesAfter(cursor, read, true);
      if (expired) return;
      if (entries.length > 0) {
        // What a stream behind the reader's window reads itself: about one buffer of events at a time.
        size = readSizeFor(entries, this.outgoing.readAheadBytes, limit);
        // Each event's block is rendered once, and each batch assembled once, for all streams. A compressed stream
        // writes one batch, compressed once for all streams; a plain one hands each block on as it is (joined, a
        // batch would be a copy per stream, and issue 33 found those copies, promoted while queued, in the growth
        // with stalled streams).
        const batch = this.batches.batch(cursor, entries, filter, batchKey);
        cursor = entries[entries.length - 1]!.position;
        // A batch none of whose events matched writes nothing now: its cursor goes out when the feed is quiet.
        if (batch.lastMatch !== undefined) {
          if (!(await this.sendBatch(writer, encode, batch))) return;
          writer.flush();
          sentId = batch.lastMatch;
          lastWrite = Date.now();
        }
        // A full read: more events wait, in the window or the database. Taken from the window, the batches of a
        // stream behind a bulk load's events would follow one another without letting a request in (issue 37); a
        // turn after every batch, though, left a sku= stream 10 s behind the feed (issue 33). So the next batch
        // waits for the event loop's turn once a slice is used up.
        if (entries.length === read) {
          if (performance.now() - sliceStarted >= SLICE_MS) {
            await nextTurn();
            sliceStarted = performance.now();
          }
          continue;
        }
      } else {
        // Quiet: the cursor a filtered reader has not been told yet goes out within POSITION_MS, else a heartbeat
        // after heartbeatMs without a write, so proxies and browsers see the connection is alive.
        const now = Date.now();
        const due = lastWrite + (sentId === cursor ? this.settings.heartbeatMs : POSITION_MS);
        if (now >= due) {
          lastWrite = now;
          if (!(await writer.send(encode(sentId === cursor ? ': keep-alive\n\n' : position(cursor))))) return;
          sentId = cursor;
          writer.flush();
        }
      }
      await nextPulse();
      sliceStarted = performance.now();
    }
  }
}
