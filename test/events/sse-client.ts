import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

/** One block of a Server-Sent Events stream, by field (`id`, `event`, `data`, `retry`), or a comment. */
export interface Block {
  readonly fields: Record<string, string>;
  readonly comment?: string;
}

export interface Stream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly blocks: Block[];
  /** Blocks with data: the events dispatched. */
  events(): Block[];
  /** The last `id:` received, as an EventSource would send it on reconnect. */
  lastEventId(): string | undefined;
  /** Resolves once `predicate` holds for the blocks; fails after `ms`. */
  until(predicate: (blocks: Block[]) => boolean, ms?: number): Promise<void>;
  /** Resolves when the service ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

function parseBlock(text: string): Block {
  if (text.startsWith(':')) return { fields: {}, comment: text.slice(1).trim() };
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return { fields };
}

/** Opens `GET /v1/events` as text/event-stream on `server` (gunzipping when the answer is gzip). */
export function openStream(server: http.Server, query: string, headers: Record<string, string>): Promise<Stream> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: `/v1/events${query}`, headers: { Accept: 'text/event-stream', ...headers } },
      (res) => {
        const blocks: Block[] = [];
        let ended!: () => void;
        const stream: Stream = {
          status: res.statusCode!,
          headers: res.headers,
          blocks,
          events: () => blocks.filter((block) => block.fields.data !== undefined),
          lastEventId: () => blocks.findLast((block) => block.fields.id !== undefined)?.fields.id,
          until: async (predicate, ms = 20_000) => {
            for (const deadline = Date.now() + ms; !predicate(blocks);) {
              if (Date.now() > deadline) throw new Error(`stream: condition not met within ${ms} ms`);
              await new Promise((wake) => setTimeout(wake, 20));
            }
          },
          ended: new Promise<void>((resolveEnd) => (ended = resolveEnd)),
          close: () => req.destroy(),
        };
        const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res;
        let buffered = '';
        body.setEncoding('utf8');
        body.on('data', (text: string) => {
          buffered += text;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            blocks.push(parseBlock(buffered.slice(0, end)));
            buffered = buffered.slice(end + 2);
          }
        });
        body.on('error', () => undefined);
        body.on('end', () => ended());
        res.on('close', () => ended());
        resolve(stream);
      },
    );
    req.on('error', reject);
  });
}
