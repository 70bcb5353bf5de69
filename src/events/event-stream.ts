import type { Response } from 'express';
import { EVENT_STREAM } from '../http/media-types.js';
import { tooManyAtOnce } from '../http/server-error.js';
import type { FeedSignal } from './feed-signal.js';
import type { FeedPage, StoredEvent } from './sql.js';

/** How soon a browser's EventSource reconnects after the stream ends (the `retry:` field), in milliseconds. */
const RECONNECT_MS = 2000;

export interface EventStreamSettings {
  /** Streams a process keeps open at once; one more is a 503 with Retry-After. */
  readonly maxConcurrent: number;
  /** A comment after this long without a write, so proxies and browsers see the connection is alive. */
  readonly heartbeatMs: number;
}

export type FeedPageReader = (after: number, limit: number) => Promise<FeedPage>;

/** Where a stream starts and how it reads and renders the pages that follow. */
export interface StreamStart {
  /** The first page, read after `after`. */
  readonly first: FeedPage;
  readonly after: number;
  /** The size of the pages it reads. */
  readonly limit: number;
  readonly readPage: FeedPageReader;
  readonly render: (event: StoredEvent) => string;
}

/** One event as Server-Sent Events frame it: the cursor as its id, the type as its event name. */
function frame(event: StoredEvent, json: string): string {
  return `id: ${event.position}\nevent: ${event.type}\ndata: ${json}\n\n`;
}

/** Resolves when the response takes more ('drain') or is gone. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * D33: the feed of D29 as Server-Sent Events. The stream reads pages exactly as the JSON feed does (by cursor, on a
 * pooled connection given back before the page is written), so D29's guarantee holds, and between pages it waits on
 * the process's FeedSignal, which the one LISTEN connection and the sequencer advance: an idle stream holds no
 * database connection, only its socket. A page that comes full is followed at once by the next.
 */
export class EventStreams {
  private active = 0;

  constructor(
    private readonly settings: EventStreamSettings,
    private readonly signal: FeedSignal,
  ) {}

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
   * Streams from `from.first` (read already, so a bad cursor got its 400 or 410 before the 200) until the client
   * goes away. A cursor that falls out of the kept events while its reader lags ends the stream: the reconnect with
   * Last-Event-ID then gets the 410.
   */
  async send(res: Response, from: StreamStart): Promise<void> {
    this.admit();
    this.active++;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    try {
      await this.write(res, from, gone.signal);
    } catch (error) {
      // The status is sent: a failed page read can only end the stream, and the browser reconnects.
      res.req.log.warn({ err: error }, 'event stream ended: a page could not be read');
    } finally {
      this.active--;
      res.end();
    }
  }

  private async write(
    res: Response,
    { first, after, limit, readPage, render }: StreamStart,
    gone: AbortSignal,
  ): Promise<void> {
    res.status(200);
    res.setHeader('Content-Type', `${EVENT_STREAM}; charset=utf-8`);
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    // Proxies that buffer answers (nginx) would hold the events back.
    res.setHeader('X-Accel-Buffering', 'no');
    res.write(`retry: ${RECONNECT_MS}\n\n`);
    let page = first;
    let cursor = after;
    let lastWrite = Date.now();
    while (!gone.aborted) {
      if (cursor < page.prunedThrough) break;
      if (page.events.length > 0) {
        const text = page.events.map((event) => frame(event, render(event))).join('');
        cursor = page.events[page.events.length - 1]!.position;
        lastWrite = Date.now();
        if (!res.write(text)) await drained(res);
        if (page.events.length === limit) {
          page = await readPage(cursor, limit);
          continue;
        }
      }
      // Waits for a position beyond what the database has numbered too, so an empty page never spins.
      const quietFor = this.settings.heartbeatMs - (Date.now() - lastWrite);
      await this.signal.waitBeyond(Math.max(cursor, page.sequencedThrough), Math.max(quietFor, 0), gone);
      if (gone.aborted) break;
      if (this.signal.head > Math.max(cursor, page.sequencedThrough)) {
        page = await readPage(cursor, limit);
      } else {
        page = { ...page, events: [] };
        if (Date.now() - lastWrite >= this.settings.heartbeatMs) {
          lastWrite = Date.now();
          if (!res.write(': keep-alive\n\n')) await drained(res);
        }
      }
    }
  }
}
