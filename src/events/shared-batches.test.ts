import { describe, expect, it } from 'vitest';
import { feedFrame } from '../../test/support/feed-frames.js';
import { feedEntry, type FeedEntry } from './feed-entry.js';
import { filterKey, SharedBatches } from './shared-batches.js';

function entry(position: number, type: string, sku: string): FeedEntry {
  return feedEntry(
    feedFrame({
      position,
      id: `e${position}`,
      type,
      requestId: null,
      occurredAt: new Date(0),
      resource: `{"product":{"sku":"${sku}"}}`,
    }),
  );
}

const entries = [
  entry(11, 'product.event.updated', 'A-1'),
  entry(12, 'pu.event.moved', 'B-2'),
  entry(13, 'product.event.updated', 'B-2'),
  entry(14, 'pu.event.moved', 'A-1'),
];

describe('batches of the feed shared by the streams that read the same events with the same filter', () => {
  it('gives every stream reading the same events with an equal filter the one batch and its one string', () => {
    const batches = new SharedBatches();
    const first = batches.batch(10, entries, { sku: 'A-1' }, filterKey({ sku: 'A-1' }));
    // Another stream's read of the same events: another array, another filter object.
    const second = batches.batch(10, [...entries], { sku: 'A-1' }, filterKey({ sku: 'A-1' }));

    expect(second).toBe(first);
    expect(second.text).toBe(first.text);
    expect(first.text).toBe(entries[0]!.frame + entries[3]!.frame);
    expect(first.lastMatch).toBe(14);
  });

  it('assembles a batch of its own for another filter, another cursor or other events', () => {
    const batches = new SharedBatches();
    const skuA = batches.batch(10, entries, { sku: 'A-1' }, filterKey({ sku: 'A-1' }));
    const types = new Set(['product.event.updated']);
    const products = batches.batch(10, entries, { types }, filterKey({ types }));
    const later = batches.batch(11, entries.slice(1), { sku: 'A-1' }, filterKey({ sku: 'A-1' }));
    const fewer = batches.batch(10, entries.slice(0, 2), { sku: 'A-1' }, filterKey({ sku: 'A-1' }));

    expect(products.frames).toEqual([entries[0]!.frame, entries[2]!.frame]);
    expect(products.lastMatch).toBe(13);
    expect(later.frames).toEqual([entries[3]!.frame]);
    expect(fewer.frames).toEqual([entries[0]!.frame]);
    expect(fewer.lastMatch).toBe(11);
    expect(new Set([skuA, products, later, fewer]).size).toBe(4);
  });

  it('has no match for a read none of whose events the filter passes', () => {
    const batch = new SharedBatches().batch(10, entries, { sku: 'C-3' }, filterKey({ sku: 'C-3' }));

    expect(batch.frames).toEqual([]);
    expect(batch.lastMatch).toBeUndefined();
  });

  it('takes filters naming the same types in another order as one, and a filter without types as another', () => {
    expect(filterKey({ types: new Set(['b', 'a']), sku: 'X' })).toBe(
      filterKey({ types: new Set(['a', 'b']), sku: 'X' }),
    );
    expect(filterKey({ sku: 'X' })).not.toBe(filterKey({ types: new Set<string>(), sku: 'X' }));
    expect(filterKey({})).not.toBe(filterKey({ sku: 'X' }));
  });
});
