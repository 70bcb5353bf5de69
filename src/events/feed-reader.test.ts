import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { FeedReader } from './feed-reader.js';
import { FeedSignal } from './feed-signal.js';
import { feedFrame } from '../../test/support/feed-frames.js';
import type { FeedPage, FramedEvent } from './sql.js';

function framedEvent(position: number, padding = 1000): FramedEvent {
  return feedFrame({
    position,
    id: `e${position}`,
    type: 'product.event.updated',
    requestId: null,
    occurredAt: new Date(0),
    resource: `{"sku":"S-${position}","padding":"${'p'.repeat(padding)}"}`,
  });
}

/** A feed of events 1..100 in a database the test counts the reads of; no stream follows, so no window is kept. */
function readerOverAFeed(): { reader: FeedReader; reads: { after: number | undefined; limit: number }[] } {
  const reads: { after: number | undefined; limit: number }[] = [];
  const readPage = (after: number | undefined, limit: number): Promise<FeedPage> => {
    reads.push({ after, limit });
    const events: FramedEvent[] = [];
    for (let position = (after ?? 0) + 1; position <= 100 && events.length < limit; position++) {
      events.push(framedEvent(position));
    }
    return Promise.resolve({ prunedThrough: 0, sequencedThrough: 100, events });
  };
  const signal = new FeedSignal();
  signal.advance(100);
  return { reader: new FeedReader(readPage, signal, pino({ level: 'silent' })), reads };
}

describe('the feed reader for pages behind its window (issue 33)', () => {
  it('reads the same events once for pages that read them at the same time, and gives each the same entries', async () => {
    const { reader, reads } = readerOverAFeed();

    const pages = await Promise.all(Array.from({ length: 5 }, () => reader.entriesAfter(10, 3, false)));

    expect(reads).toEqual([{ after: 10, limit: 3 }]);
    expect(pages[0]!.entries.map((entry) => entry.position)).toEqual([11, 12, 13]);
    for (const page of pages) expect(page.entries).toEqual(pages[0]!.entries);
    expect(pages[4]!.entries[0]).toBe(pages[0]!.entries[0]);
    reader.stop();
  });

  it('answers a page a little behind another from what that one read, and reads only what follows it', async () => {
    const { reader, reads } = readerOverAFeed();
    const ahead = await reader.entriesAfter(10, 4, false);

    const behind = await reader.entriesAfter(12, 4, false);

    expect(behind.entries.map((entry) => entry.position)).toEqual([13, 14, 15, 16]);
    expect(behind.entries[0]).toBe(ahead.entries[2]);
    expect(reads).toEqual([
      { after: 10, limit: 4 },
      { after: 14, limit: 2 },
    ]);
    reader.stop();
  });

  it('shares the first events a page read to check its cursor with the pages that read them next', async () => {
    const { reader, reads } = readerOverAFeed();
    const first = reader.remember(0, [framedEvent(1), framedEvent(2)]);

    const next = await reader.entriesAfter(0, 2, false);

    expect(next.entries[1]).toBe(first[1]);
    expect(reads).toEqual([]);
    reader.stop();
  });
});

describe('the feed reader behind a bulk load', () => {
  it('reads the page after the one it waits for beside it while the head is further on, and keeps the events gapless in order', async () => {
    const head = 5000;
    const reads: { after: number | undefined; limit: number }[] = [];
    const pending: (() => void)[] = [];
    const readPage = (after: number | undefined, limit: number): Promise<FeedPage> => {
      reads.push({ after, limit });
      const events: FramedEvent[] = [];
      for (let position = (after ?? 0) + 1; position <= head && events.length < limit; position++) {
        events.push(framedEvent(position, 500));
      }
      return new Promise((resolve) =>
        pending.push(() => resolve({ prunedThrough: 0, sequencedThrough: head, events })),
      );
    };
    const signal = new FeedSignal();
    const reader = new FeedReader(readPage, signal, pino({ level: 'silent' }));
    const leave = reader.follow(0);
    signal.advance(head);

    // The first read, before the events' size is known, takes 16; the one beside it the next 16.
    expect(reads).toEqual([
      { after: 0, limit: 16 },
      { after: 16, limit: 16 },
    ]);
    while (reader.eventsAfter(0, head)!.length < head) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Each page read asked for the next one beside it, sized by the events read before it (about 1 KB each, as
    // the window counts them: 5,000 of them fit in it).
    expect(reads.slice(2, 4)).toEqual([
      { after: 32, limit: 1000 },
      { after: 1032, limit: 1000 },
    ]);
    expect(reads.filter((read) => (read.after ?? 0) >= head)).toEqual([]);
    const positions = reader.eventsAfter(0, head)!.map((entry) => entry.position);
    expect(positions).toEqual(Array.from({ length: head }, (_, index) => index + 1));
    leave();
    reader.stop();
  });

  it('reads again from where it is when the page read beside the awaited one fails, and loses no event', async () => {
    const head = 100;
    const reads: (number | undefined)[] = [];
    let failed = false;
    const readPage = (after: number | undefined, limit: number): Promise<FeedPage> => {
      reads.push(after);
      // The page read beside the first one (after 16) fails once.
      if (after === 16 && !failed) {
        failed = true;
        return Promise.reject(new Error('connection lost'));
      }
      const events: FramedEvent[] = [];
      for (let position = (after ?? 0) + 1; position <= head && events.length < limit; position++) {
        events.push(framedEvent(position, 500));
      }
      return Promise.resolve({ prunedThrough: 0, sequencedThrough: head, events });
    };
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const signal = new FeedSignal();
    const reader = new FeedReader(readPage, signal, logger);
    const leave = reader.follow(0);
    signal.advance(head);

    await vi.waitFor(() => expect(reader.eventsAfter(0, head)?.length).toBe(head), { timeout: 5000, interval: 50 });

    expect(reader.eventsAfter(0, head)!.map((entry) => entry.position)).toEqual(
      Array.from({ length: head }, (_, index) => index + 1),
    );
    expect(reads.filter((after) => after === 16)).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('reading new events for the event streams failed; retrying');
    leave();
    reader.stop();
  });
});
