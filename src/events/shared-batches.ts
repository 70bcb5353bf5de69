import { ThisTurn } from '../http/this-turn.js';
import type { FeedEntry } from './feed-entry.js';
import { matches, type FeedFilter } from './feed-filter.js';

/** What a read of the feed gives a stream with a filter: assembled once for every stream that makes the same read. */
export interface Batch {
  /** Each matching event's block, in order. */
  readonly frames: readonly string[];
  /** The position of the last matching event; undefined when none matched. */
  readonly lastMatch: number | undefined;
  /** The blocks as one string, joined when first asked: one string object for all the streams that send it. */
  readonly text: string;
}

/** One key for filters that pass the same events, however their types were listed. */
export function filterKey({ types, sku }: FeedFilter): string {
  return JSON.stringify([types ? [...types].sort() : null, sku ?? null]);
}

/**
 * D39, issue 33: the streams caught up with the feed read the same events on the same pulse, and those with the same
 * filter send the same batch. It is matched and joined once for all of them, and being one string it is compressed
 * once and found again by identity (src/http/gzip-frames.ts): assembled per stream, a batch was a join, a hash and a
 * comparison of a few KB each, a fifth of what 1,000 streams cost. Entries after a cursor through a position are the
 * same events wherever they were read, so that is the key. Batches are kept until the event loop's next turn.
 */
export class SharedBatches {
  private readonly thisTurn = new ThisTurn<Batch>();

  /** The batch of `entries` (read after `cursor`, at least one) for streams with `filter`, whose key is `key`. */
  batch(cursor: number, entries: readonly FeedEntry[], filter: FeedFilter, key: string): Batch {
    const batchKey = `${cursor}:${entries[entries.length - 1]!.position}:${key}`;
    return this.thisTurn.get(batchKey, () => assemble(entries, filter));
  }
}

function assemble(entries: readonly FeedEntry[], filter: FeedFilter): Batch {
  const frames: string[] = [];
  let lastMatch: number | undefined;
  for (const entry of entries) {
    if (!matches(filter, entry)) continue;
    frames.push(entry.frame);
    lastMatch = entry.position;
  }
  let text: string | undefined;
  return {
    frames,
    lastMatch,
    get text() {
      return (text ??= frames.join(''));
    },
  };
}
