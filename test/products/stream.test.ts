import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_PAGE_SIZE } from '../../src/http/stream.js';
import { useTestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();
const PRODUCTS = 20_000;

let server: http.Server;
let streamed: ServerResponse | undefined;

beforeAll(async () => {
  await ctx.db.pool.query(
    `INSERT INTO product (sku, base_unit_magnitude, base_unit_code, description)
     SELECT 'STREAM-' || n, 1, 'PC', repeat('x', 200) FROM generate_series(1, $1::int) AS n`,
    [PRODUCTS],
  );
  server = http.createServer((req, res) => {
    streamed = res;
    ctx.app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

interface SlowRead {
  status?: number;
  bytes: number;
  drains: number;
  mostCloseListeners: number;
  /** The most the service's response held unsent at once. */
  mostBuffered: number;
}

/** GET /v1/products read slowly: the reader pauses after every chunk, so the service must wait for it to drain. */
function readSlowly(): Promise<SlowRead> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    let drains = 0;
    let mostCloseListeners = 0;
    let mostBuffered = 0;
    const request = http.get(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/products',
        headers: { Authorization: bearer(), Accept: 'application/json' },
      },
      (response) => {
        streamed?.on('drain', () => drains++);
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          mostCloseListeners = Math.max(mostCloseListeners, streamed?.listenerCount('close') ?? 0);
          mostBuffered = Math.max(mostBuffered, streamed?.writableLength ?? 0);
          response.pause();
          setTimeout(() => response.resume(), 2);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode, bytes, drains, mostCloseListeners, mostBuffered }),
        );
      },
    );
    request.on('error', reject);
  });
}

describe('GET /v1/products to a slow reader', () => {
  it('waits for the reader to drain many times, holding one page at a time and no piled-up listeners', async () => {
    const read = await readSlowly();

    expect(read.status).toBe(200);
    expect(read.bytes).toBeGreaterThan(PRODUCTS * 200);
    expect(read.drains).toBeGreaterThan(20);
    expect(read.mostCloseListeners).toBeLessThanOrEqual(5);
    // Memory stays flat: never more unsent than one page of the list.
    const pageBytes = (STREAM_PAGE_SIZE * read.bytes) / PRODUCTS;
    expect(read.mostBuffered).toBeGreaterThan(0);
    expect(read.mostBuffered).toBeLessThan(pageBytes * 1.05);
  }, 60_000);
});
