import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { feedEntry, type FeedEntry } from './feed-entry.js';
import type { FeedSignal } from './feed-signal.js';
import type { FeedPage, FramedEvent } from './sql.js';

export type FeedPageReader = (after: number | undefined, limit: number) => Promise<FeedPage>;

/** A page read and rendered as entries; its rows are gone. */
interface RenderedPage {
  readonly entries: FeedEntry[];
  readonly prunedThrough: number;
}

/** A page asked for: the events after `from`, at most `size`. */
interface PageRead {
  readonly from: number;
  readonly size: number;
  readonly page: Promise<RenderedPage>;
}

/**
 * Events one read takes at most, and about how many bytes (at two a character): large events are read fewer at a
 * time. A read's rows all live until its last arrives; 34 rows of 60 KB at twice this lived through collections and
 * were promoted (issue 33). Events under about 1 KB are still read a thousand at a time.
 */
const READ_LIMIT = 1000;
const READ_BYTES = 2 * 1024 * 1024;
/**
 * What the reader keeps of the newest events for streams a little behind; older ones they read themselves. Counted
 * at two bytes a character, so about 4 MB of ASCII events: an event that leaves the window before V8's second
 * young-generation collection dies young. With twice that, events of 60 KB lived through it and were promoted, and
 * their garbage in the old generation was most of the instance's growth in the stalled-streams test (issue 33).
 */
const WINDOW_BYTES = 8 * 1024 * 1024;
const WINDOW_EVENTS = 20_000;
/** The first read, before the size of events is known: large events are not read by the hundred. */
const UNSIZED_READ = 16;
/**
 * What the reader keeps of events read from the database for streams and pages behind the window (issue 33), so
 * that many reading the same events (the pages of one cursor, streams that fell behind together) read, render and
 * hold each once; and how long it is kept after the last read that used it.
 */
const HISTORY_BYTES = 8 * 1024 * 1024;
const HISTORY_MS = 10_000;
/** After a failed read, the next try (a new event's signal tries at once). */
const RETRY_MS = 1000;

/**
 * D39: the one reader of new events in an instance. While any stream follows the feed it reads each newly numbered
 * event once, when the FeedSignal says the head moved, renders it once, and keeps the newest in a window in memory
 * that every SSE stream and long poll takes its events from, each with its own filter. So the statements per commit
 * do not grow with the streams, and a stream that does not keep up only falls back in the window (or out of it, and
 * then reads its pages itself until it is back) while the reader and the others go on.
 *
 * The window holds every event after `base` through `through`, in position order, as the feed pages read them.
 */
export class FeedReader {
  private window: FeedEntry[] = [];
  private windowBytes = 0;
  private base = 0;
  private through: number | undefined;
  private followers = 0;
  private reading: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readSize = UNSIZED_READ;
  private readonly advanced = new EventEmitter().setMaxListeners(0);
  /** Behind the window: each event read from the database, keyed by the position it follows, oldest read first. */
  private readonly history = new Map<number, FeedEntry>();
  private historyBytes = 0;
  private historyTimer: NodeJS.Timeout | undefined;
  /** Database reads under way for those behind the window, by `after` and limit: the same read is made once. */
  private readonly historyReads = new Map<string, Promise<{ entries: FeedEntry[]; expired: boolean }>>();
  private readonly stopListening: () => void;

  constructor(
    private readonly readPage: FeedPageReader,
    private readonly signal: FeedSignal,
    private readonly logger: Logger,
  ) {
    this.stopListening = signal.onAdvance(() => this.read());
  }

  /**
   * A stream (or long poll) follows the feed from `position` until the returned function is called. The first one
   * starts the window there; when the last leaves, the window is let go.
   */
  follow(position: number): () => void {
    this.followers++;
    if (this.through === undefined) {
      // A follower far behind reads its way up by itself; the window starts at the head.
      this.base = Math.max(position, this.signal.head);
      this.through = this.base;
    }
    this.read();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.followers === 0) this.reset();
    };
  }

  /**
   * The events after `after` from memory, at most `limit`: undefined when the window does not reach back that far
   * (the caller reads the page itself), empty when nothing newer has been read yet.
   */
  eventsAfter(after: number, limit: number): FeedEntry[] | undefined {
    if (this.through === undefined || after < this.base) return undefined;
    if (after >= this.through) return [];
    let low = 0;
    let high = this.window.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.window[middle]!.position <= after) low = middle + 1;
      else high = middle;
    }
    return this.window.slice(low, low + limit);
  }

  /**
   * The events after `after`, at most `limit`: from the window when it reaches back that far, else read from the
   * database (`expired` when the cursor is older than the events kept). A follower takes an empty answer from the
   * window and waits for the reader; anyone else reads when the window has nothing newer.
   */
  async entriesAfter(
    after: number,
    limit: number,
    following: boolean,
  ): Promise<{ entries: FeedEntry[]; expired: boolean }> {
    const cached = this.eventsAfter(after, limit);
    if (cached && (following || cached.length > 0)) return { entries: cached, expired: false };
    const known = this.historyAfter(after, limit);
    if (known.length === limit) return { entries: known, expired: false };
    const from = known.length > 0 ? known[known.length - 1]!.position : after;
    const read = await this.readBehind(from, limit - known.length);
    if (known.length > 0) return { entries: [...known, ...read.entries], expired: false };
    return read;
  }

  /**
   * Events read from the database and rendered once for all who read the same ones behind the window: the same
   * read under way is shared, and what was read is kept (about HISTORY_BYTES) for those a little behind.
   */
  private readBehind(after: number, limit: number): Promise<{ entries: FeedEntry[]; expired: boolean }> {
    const key = `${after}:${limit}`;
    const underWay = this.historyReads.get(key);
    if (underWay) return underWay;
    const read = this.readPage(after, limit)
      .then((page) => {
        if (after < page.prunedThrough) return { entries: [], expired: true };
        return { entries: this.remember(after, page.events), expired: false };
      })
      .finally(() => this.historyReads.delete(key));
    this.historyReads.set(key, read);
    return read;
  }

  /**
   * The entries of events read after `after`, those already kept shared: the history links each to the position
   * before it, so a page of it is known to follow on without a gap.
   */
  remember(after: number, events: readonly FramedEvent[]): FeedEntry[] {
    const entries: FeedEntry[] = [];
    let previous = after;
    for (const event of events) {
      let entry = this.history.get(previous);
      if (entry?.position !== event.position) {
        if (entry) this.historyBytes -= entry.bytes;
        entry = feedEntry(event);
        this.history.set(previous, entry);
        this.historyBytes += entry.bytes;
      }
      entries.push(entry);
      previous = event.position;
    }
    for (const [key, entry] of this.history) {
      if (this.historyBytes <= HISTORY_BYTES) break;
      this.history.delete(key);
      this.historyBytes -= entry.bytes;
    }
    this.keepHistory();
    return entries;
  }

  /** The kept events that follow `after` without a gap, at most `limit`. */
  private historyAfter(after: number, limit: number): FeedEntry[] {
    const entries: FeedEntry[] = [];
    let previous = after;
    while (entries.length < limit) {
      const entry = this.history.get(previous);
      if (!entry) break;
      entries.push(entry);
      previous = entry.position;
    }
    if (entries.length > 0) this.keepHistory();
    return entries;
  }

  /** The history is let go HISTORY_MS after it was last used. */
  private keepHistory(): void {
    clearTimeout(this.historyTimer);
    this.historyTimer = setTimeout(() => {
      this.history.clear();
      this.historyBytes = 0;
    }, HISTORY_MS);
    this.historyTimer.unref();
  }

  /** Resolves once the reader holds an event beyond `position`, after `timeoutMs`, or on `abort`. */
  waitBeyond(position: number, timeoutMs: number, abort: AbortSignal): Promise<void> {
    if ((this.through ?? 0) > position || abort.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.advanced.off('advanced', onAdvanced);
        abort.removeEventListener('abort', finish);
        resolve();
      };
      const onAdvanced = (through: number): void => {
        if (through > position) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.advanced.on('advanced', onAdvanced);
      abort.addEventListener('abort', finish, { once: true });
    });
  }

  /**
   * Calls `listener` whenever the reader holds newer events (the streams' one pulse listens), with `full` when it
   * read a whole page: more are waiting, a bulk load's events are coming faster than one read takes.
   */
  onAdvanced(listener: (through: number, full: boolean) => void): void {
    this.advanced.on('advanced', listener);
  }

  stop(): void {
    this.stopListening();
    this.reset();
    clearTimeout(this.historyTimer);
    this.history.clear();
    this.historyBytes = 0;
  }

  private reset(): void {
    clearTimeout(this.retryTimer);
    this.window = [];
    this.windowBytes = 0;
    this.through = undefined;
  }

  /** One read at a time; a signal during a read is caught by its loop, which reads until it reaches the head. */
  private read(): void {
    if (this.reading || this.through === undefined || this.signal.head <= this.through) return;
    this.reading = this.readToHead()
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'reading new events for the event streams failed; retrying');
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.read(), RETRY_MS);
        this.retryTimer.unref();
      })
      .finally(() => {
        this.reading = undefined;
      });
  }

  /**
   * Behind a bulk load's events, the page after the one asked for is read beside it, on another connection: the
   * positions are gapless (D29), so a full page's successor starts where it ends, and the database reads it while
   * this process parses and renders the first. Read one after the other, the pages of a 1,000,000-unit intake came
   * at about 40,000 events/s, slower than they were numbered: a `sku=` stream got the move after it 5 s after it
   * was numbered (bench/notes.md, "Numbering after a 1,000,000-unit intake").
   */
  private async readToHead(): Promise<void> {
    let ahead: PageRead | undefined;
    while (this.through !== undefined && this.signal.head > this.through) {
      const from = this.through;
      const read = ahead?.from === from ? ahead : this.readFrom(from, this.readSize);
      ahead = this.signal.head > from + read.size ? this.readFrom(from + read.size, this.readSize) : undefined;
      const { entries, prunedThrough } = await read.page;
      // Let go meanwhile (no follower), or started anew elsewhere: this page belongs to no window.
      if (this.through !== from) return;
      if (entries.length === 0) {
        // Pruned past the window: what follows starts after what is kept; streams behind it get their 410.
        if (prunedThrough > from) this.restartAt(prunedThrough);
        return;
      }
      this.keep(entries);
      this.through = entries[entries.length - 1]!.position;
      const full = entries.length === read.size;
      this.advanced.emit('advanced', this.through, full);
      this.readSize = readSizeFor(entries, READ_BYTES, READ_LIMIT);
      if (!full) return;
    }
  }

  private readFrom(from: number, size: number): PageRead {
    const page = this.readEntries(from, size);
    // A page read ahead may fail before it is awaited, or never be (the window let go, the page not following on):
    // its failure is reported where it is awaited, if it is.
    page.catch(() => undefined);
    return { from, size, page };
  }

  /**
   * A page rendered as entries. Its rows die with this call: held while the next page is read, each event's text
   * would live through the collections of that read and be promoted, twice the events' size in garbage (issue 33).
   */
  private async readEntries(after: number, limit: number): Promise<RenderedPage> {
    const page = await this.readPage(after, limit);
    return { entries: page.events.map(feedEntry), prunedThrough: page.prunedThrough };
  }

  /** Adds a page's entries and lets the oldest go while the window holds too much (always keeping the newest). */
  private keep(entries: FeedEntry[]): void {
    for (const entry of entries) {
      this.window.push(entry);
      this.windowBytes += entry.bytes;
    }
    let evicted = 0;
    const tooMuch = (): boolean => this.windowBytes > WINDOW_BYTES || this.window.length - evicted > WINDOW_EVENTS;
    while (this.window.length - evicted > 1 && tooMuch()) {
      this.windowBytes -= this.window[evicted]!.bytes;
      this.base = this.window[evicted]!.position;
      evicted++;
    }
    if (evicted > 0) this.window.splice(0, evicted);
  }

  private restartAt(position: number): void {
    this.window = [];
    this.windowBytes = 0;
    this.base = position;
    this.through = position;
    this.advanced.emit('advanced', position);
  }
}

/** How many events like these fit in `bytes` (at least one, at most `limit`). */
export function readSizeFor(entries: readonly FeedEntry[], bytes: number, limit: number): number {
  const largest = entries.reduce((most, entry) => Math.max(most, entry.bytes), 1);
  return Math.max(1, Math.min(limit, Math.floor(bytes / largest)));
}
