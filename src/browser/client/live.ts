import { authorization } from './credentials.js';
import { expand, follow, link, withParameter } from './api.js';

const RECONNECT_MS = 2000;

export interface LiveHandlers {
  /** After every (re)connect, before the stream counts as connected: reads again what the gap may hide; never throws. */
  connected(): Promise<void>;
  event(type: string, data: string): void;
  state(text: string): void;
}

/** Whether an event's JSON names the SKU (its resource's or payload's `sku`). */
export function isAbout(data: string, sku: string): boolean {
  return data.includes(JSON.stringify(sku));
}

/** The blocks of a Server-Sent Events text as field maps; the unfinished rest stays in `rest`. */
function blocksOf(text: string): { blocks: Map<string, string>[]; rest: string } {
  const parts = text.split('\n\n');
  const rest = parts.pop() ?? '';
  const blocks = parts.map((block) => {
    const fields = new Map<string, string>();
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
    }
    return fields;
  });
  return { blocks, rest };
}

/**
 * Follows the SKU's events: Server-Sent Events read with fetch, because EventSource cannot send the Authorization
 * header. The stream asks the feed for the SKU's events only (`sku=`); a feed without that filter answers 400, and
 * the whole feed is read instead. Either way events about other SKUs are dropped here. A dropped stream is opened
 * again with Last-Event-ID, and the figures are read again on every connect, since a gap may hide changes.
 */
export async function followChanges(sku: string, handlers: LiveHandlers, abort: AbortSignal): Promise<void> {
  const feed = expand(link(await follow('events-index'), 'events-feed'), {});
  let href = withParameter(feed, 'sku', sku);
  let lastEventId: string | undefined;
  while (!abort.aborted) {
    try {
      const headers: Record<string, string> = { ...authorization(), Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const response = await fetch(href, { headers, signal: abort });
      if (response.status === 400 && href !== feed) {
        href = feed;
        continue;
      }
      if (!response.ok || !response.body) throw new Error(`${response.status} ${response.statusText}`);
      handlers.state('reading the figures');
      await handlers.connected();
      handlers.state('connected');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        const { blocks, rest } = blocksOf(buffered + chunk.value);
        buffered = rest;
        for (const fields of blocks) {
          if (fields.has('id')) lastEventId = fields.get('id');
          const data = fields.get('data');
          if (data !== undefined && isAbout(data, sku)) handlers.event(fields.get('event') ?? 'message', data);
        }
      }
      throw new Error('the stream ended');
    } catch (error) {
      if (abort.aborted) return;
      handlers.state(`reconnecting (${(error as Error).message})`);
    }
    await new Promise((resolve) => window.setTimeout(resolve, RECONNECT_MS));
  }
}
