import type { FramedEvent } from './sql.js';

/**
 * An event as the feed sends it, rendered once per instance however many streams send it: its FeedEvent JSON,
 * the SKUs its resource names (for `sku=`), and its size (what the reader's window holds).
 */
export interface FeedEntry {
  readonly position: number;
  readonly type: string;
  /** A slice of `frame` (no copy of its own). */
  readonly json: string;
  /** Read from the JSON's resource when first asked, then kept. */
  readonly skus: ReadonlySet<string>;
  /**
   * The event as a Server-Sent Events block: its cursor as id, its type as event name, the JSON as data. Rendered
   * with the entry, as the one string it holds, and shared by every stream and page that sends it.
   */
  readonly frame: string;
  readonly bytes: number;
}

/**
 * Every `sku` of the resource, at any depth: a Product's own, a unit's `product.sku`, a load unit's products, a
 * reservation's. Read once per event, so a filter is a set lookup. Without a backslash in the text every `"` opens
 * or closes a string, so `"sku"` followed by `:` is that key and a `"` after it opens its value, which ends at the
 * next `"`. Found by search: a parse with a reviver took about 100 µs a unit's event on the loaded bench machine
 * against 4.5 µs, and a `sku=` stream behind the 1,010,000 events of a 1,000,000-unit intake held the event loop
 * for seconds at a time (issue 33). Text with escapes takes the parse.
 */
function skusOf(resource: string): Set<string> {
  if (resource.includes('\\')) return parsedSkusOf(resource);
  const skus = new Set<string>();
  for (let at = resource.indexOf('"sku"'); at >= 0; at = resource.indexOf('"sku"', at)) {
    let next = skipSpace(resource, at + 5);
    if (resource[next] !== ':') {
      at = next;
      continue;
    }
    next = skipSpace(resource, next + 1);
    if (resource[next] !== '"') {
      at = next;
      continue;
    }
    const end = resource.indexOf('"', next + 1);
    if (end < 0) break;
    skus.add(resource.slice(next + 1, end));
    at = end + 1;
  }
  return skus;
}

function skipSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  return at;
}

function parsedSkusOf(resource: string): Set<string> {
  const skus = new Set<string>();
  try {
    // The reviver sees every value once, innermost first; keeping none of them frees the tree as it goes.
    JSON.parse(resource, (key, value: unknown) => {
      if (key === 'sku' && typeof value === 'string') skus.add(value);
      return undefined;
    });
  } catch {
    // A resource the parser refuses names no SKU a filter could ask for.
  }
  return skus;
}

/**
 * The entry holds one string, its SSE frame as the database rendered it (one flat string, no row parsed apart and
 * joined again): its JSON is a slice of it (no copy), so nothing else of the row lives on with the entry (issue 33:
 * what lives through two scavenges is promoted, and the stalled-streams test's growth was such garbage).
 */
export function feedEntry(event: FramedEvent): FeedEntry {
  const { position, type, frame } = event;
  const headLength = `id: ${position}\nevent: ${type}\ndata: `.length;
  const json = frame.slice(headLength, frame.length - 2);
  let skus: Set<string> | undefined;
  return {
    position,
    type,
    json,
    get skus() {
      // Read from the entry's own JSON, whose resource is its only part with a `sku` key: no second copy is kept.
      return (skus ??= skusOf(json));
    },
    frame,
    // Strings take up to two bytes a character in memory.
    bytes: json.length * 2,
  };
}
