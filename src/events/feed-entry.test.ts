import { describe, expect, it } from 'vitest';
import { feedFrame } from '../../test/support/feed-frames.js';
import { feedEntry } from './feed-entry.js';

function skusOf(resource: string): string[] {
  const event = feedFrame({
    position: 1,
    id: 'e1',
    type: 'pu.event.created',
    requestId: null,
    occurredAt: new Date(0),
    resource,
  });
  return [...feedEntry(event).skus].sort();
}

describe('the SKUs a feed entry names', () => {
  it('finds every sku key at any depth, with or without spaces around the colon', () => {
    expect(skusOf('{"product":{"sku":"A-1"},"lines":[{"x":{"sku" : "B-2"}},{"sku":\n"C-3"}]}')).toEqual([
      'A-1',
      'B-2',
      'C-3',
    ]);
  });

  it('takes no value that is the word sku, no key that only ends in sku and no sku that is not a string', () => {
    expect(skusOf('{"type":"sku","parentsku":"P-1","sku":42,"other":{"sku":null}}')).toEqual([]);
  });

  it('reads text with escapes as a parse does: an escaped quote inside a value is not a key', () => {
    expect(skusOf('{"description":"say \\"sku\\":\\"FAKE\\"","product":{"sku":"A\\"1"}}')).toEqual(['A"1']);
    expect(skusOf('{"product":{"\\u0073ku":"U-1"}}')).toEqual(['U-1']);
  });
});
