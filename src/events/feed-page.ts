import type { Request, Response } from 'express';
import type { OutgoingStreams, StreamWriter } from '../http/stream-writer.js';
import type { FeedEntry } from './feed-entry.js';
import { matches, type FeedFilter } from './feed-filter.js';
import type { FeedReader } from './feed-reader.js';

/** Events a filtered page looks through at most before it answers with what it found and the `next` so far. */
const SCAN_LIMIT = 10_000;
/** The most events one read takes for a page; fewer when events are large (see `readSize`). */
const READ_LIMIT = 1000;
/** A read before any event of the page was seen: their size is unknown, so a few (a thousand of 60 KB were 60 MB). */
const UNSIZED_READ = 8;

/**
 * What the read that checked a page's cursor found, without its rows: a page whose client takes nothing would hold
 * its own copy of them until it is cut (issue 33), where the reader's entries are shared.
 */
export interface FirstEvents {
  readonly entries: FeedEntry[];
  /** The read answered fewer events than it asked for: it reached the head. */
  readonly atHead: boolean;
}

export interface PageRequest {
  /** The cursor the page follows (checked: the first page was read from it). */
  readonly after: number;
  /** The first events after it, read to check the cursor, as the reader's entries. */
  readonly first: FirstEvents;
  readonly limit: number;
  readonly filter: FeedFilter;
  /** Long poll: how long to wait when no matching event follows `after` (ending with the token; at shutdown too). */
  readonly waitMs: number;
}

/**
 * D29, D39: one JSON page of the feed, written as it is read: events go out one by one through the StreamWriter,
 * read in slices that hold about `STREAM_BUFFER_BYTES` of events at a time, so a page of large events is never
 * held whole for a client that does not read. `next` is the position of the last event looked at, matching the
 * filter or not, so a filtered reader resumes exactly; a page stops at `limit` matches or `SCAN_LIMIT` events.
 */
export class FeedPageWriter {
  constructor(
    private readonly reader: FeedReader,
    private readonly outgoing: OutgoingStreams,
  ) {}

  async send(req: Request, res: Response, page: PageRequest): Promise<void> {
    const writer = this.outgoing.open(req, res, 'feed');
    let opened = false;
    const sendEntry = async (entry: FeedEntry): Promise<boolean> => {
      const prefix = opened ? ',' : '{"events":[';
      if (!opened) {
        opened = true;
        res.status(200).type('application/json');
      }
      // Apart: the entry's JSON, shared with every page and stream that sends it, goes out without a copy per page.
      return (await writer.send(prefix)) && writer.send(entry.json);
    };
    const outcome = await this.scan(writer, page, sendEntry);
    if (outcome === undefined) return;
    if (!opened) {
      res.status(200).type('application/json').end(`{"events":[],"next":"${outcome}"}`);
      return;
    }
    if (await writer.send(`],"next":"${outcome}"}`)) {
      await writer.drained();
      res.end();
    }
  }

  /** Sends the page's events; answers its `next`, or undefined when the client went away or stalled. */
  private async scan(
    writer: StreamWriter,
    { after, first, limit, filter, waitMs }: PageRequest,
    sendEntry: (entry: FeedEntry) => Promise<boolean>,
  ): Promise<number | undefined> {
    let cursor = after;
    let matched = 0;
    let scanned = 0;
    let largest = 0;
    const deadline = Date.now() + waitMs;
    let entries = first.entries;
    // A read that answers fewer events than asked reached the head: without a wait, the page is complete.
    let atHead = first.atHead;
    let unfollow: (() => void) | undefined;
    try {
      for (;;) {
        for (const entry of entries) {
          cursor = entry.position;
          scanned++;
          largest = Math.max(largest, entry.bytes);
          if (matches(filter, entry)) {
            matched++;
            if (!(await sendEntry(entry))) return undefined;
            if (matched === limit) return cursor;
          }
        }
        if (scanned >= SCAN_LIMIT) return cursor;
        if (atHead && (matched > 0 || Date.now() >= deadline)) return cursor;
        if (entries.length === 0) {
          if (matched > 0 || Date.now() >= deadline) return cursor;
          // Long poll: wait for the instance's reader, not the database.
          unfollow ??= this.reader.follow(cursor);
          const stop = AbortSignal.any([writer.ended, this.outgoing.stopping]);
          await this.reader.waitBeyond(cursor, deadline - Date.now(), stop);
          if (writer.ended.aborted) return undefined;
          if (stop.aborted) return cursor;
        }
        const size = this.readSize(filtered(filter) ? READ_LIMIT : limit - matched, largest);
        // No read ahead for a client that takes nothing now: what was read would wait with it until it stalls.
        if (!(await writer.ready(size * largest))) return undefined;
        const read = await this.reader.entriesAfter(cursor, size, !!unfollow);
        // Pruned under a slow page: it ends here, and the next request from `next` gets the 410.
        if (read.expired) return cursor;
        entries = read.entries;
        atHead = entries.length < size;
      }
    } finally {
      unfollow?.();
    }
  }

  /** Events worth about one buffer: large events are read a few at a time, small ones a thousand. */
  private readSize(wanted: number, largest: number): number {
    const fitting = largest > 0 ? Math.floor(this.outgoing.readAheadBytes / largest) : UNSIZED_READ;
    return Math.max(1, Math.min(READ_LIMIT, wanted, fitting));
  }
}

function filtered(filter: FeedFilter): boolean {
  return filter.types !== undefined || filter.sku !== undefined;
}
