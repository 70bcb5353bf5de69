import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_PAGE_SIZE } from '../../src/http/stream.js';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined } from '../support/http.js';
import { sleep } from '../support/pg-activity.js';
import { bearer } from '../support/tokens.js';

const STALL_TIMEOUT_MS = 1000;
const ctx = useTestApp({ STREAM_MAX_CONCURRENT: '1', STREAM_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS) });
const PRODUCTS = 20_000;
const DESCRIPTION_CHARACTERS = 200;

let server: http.Server;
let streamed: ServerResponse | undefined;
/** The most the service's response held unsent at once, right after one of its writes. */
let mostBuffered = 0;

beforeAll(async () => {
  await ctx.db.pool.query(
    `INSERT INTO product (sku, base_unit_magnitude, base_unit_code, description)
     SELECT 'STREAM-' || n, 1, 'PC', repeat('x', $2::int) FROM generate_series(1, $1::int) AS n`,
    [PRODUCTS, DESCRIPTION_CHARACTERS],
  );
  server = http.createServer((req, res) => {
    streamed = res;
    mostBuffered = 0;
    // Sampled right after each write of the service: what the response holds unsent then is its memory.
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const accepted = write(...args);
      mostBuffered = Math.max(mostBuffered, res.writableLength);
      return accepted;
    }) as typeof res.write;
    ctx.app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function getProducts(): http.ClientRequest {
  const { port } = server.address() as AddressInfo;
  return http.get({
    host: '127.0.0.1',
    port,
    path: '/v1/products',
    headers: { Authorization: bearer(), Accept: 'application/json' },
  });
}

interface SlowRead {
  status?: number;
  bytes: number;
  drains: number;
  mostCloseListeners: number;
}

/** GET /v1/products read slowly: the reader pauses after every chunk, so the service must wait for it to drain. */
function readSlowly(): Promise<SlowRead> {
  return new Promise((resolve, reject) => {
    let drains = 0;
    let mostCloseListeners = 0;
    const request = getProducts();
    request.on('response', (response) => {
      streamed?.on('drain', () => drains++);
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        mostCloseListeners = Math.max(mostCloseListeners, streamed?.listenerCount('close') ?? 0);
        response.pause();
        setTimeout(() => response.resume(), 2);
      });
      response.on('end', () => resolve({ status: response.statusCode, bytes, drains, mostCloseListeners }));
    });
    request.on('error', reject);
  });
}

const POLL_MS = 200;

/**
 * Waits until the stream has written all the socket takes and waits for the reader; answers a time at which it
 * was already waiting (it had written nothing more since).
 */
async function untilWaitingForTheReader(res: ServerResponse): Promise<number> {
  let written = -1;
  let sampledAt = 0;
  for (;;) {
    const now = res.socket?.bytesWritten ?? 0;
    if (now === written && res.writableNeedDrain) return sampledAt;
    written = now;
    sampledAt = Date.now();
    await sleep(POLL_MS);
  }
}

/** Pool connections some request has checked out right now. */
function connectionsInUse(): number {
  return ctx.db.pool.totalCount - ctx.db.pool.idleCount;
}

async function metric(name: string): Promise<number> {
  const response = await request(ctx.app).get('/actuator/prometheus').set('Authorization', bearer());
  const line = new RegExp(`^${name} (\\d+)$`, 'm').exec(response.text);
  if (!line) throw new Error(`no metric ${name}`);
  return Number(line[1]);
}

describe('GET /v1/products to a slow reader', () => {
  it('waits for the reader to drain many times, holding one page at a time and no piled-up listeners', async () => {
    const read = await readSlowly();

    expect(read.status).toBe(200);
    expect(read.bytes).toBeGreaterThan(PRODUCTS * DESCRIPTION_CHARACTERS);
    expect(read.drains).toBeGreaterThan(20);
    expect(read.mostCloseListeners).toBeLessThanOrEqual(5);
    // Memory stays flat: never more unsent than one page of the list and what the stream holds without waiting.
    const pageBytes = (STREAM_PAGE_SIZE * read.bytes) / PRODUCTS;
    // A write that made the service wait for a drain left at least the high-water mark unsent.
    expect(mostBuffered).toBeGreaterThanOrEqual(streamed!.writableHighWaterMark);
    expect(mostBuffered).toBeLessThan(pageBytes * 1.05 + streamed!.writableHighWaterMark);
  }, 60_000);
});

describe('GET /v1/products to a reader that stops reading (issue 15)', () => {
  it('cuts a reader that takes nothing after the stall timeout, holding no pool connection and refusing streams beyond the bound meanwhile', async () => {
    const stalledBefore = await metric('inventory_streams_stalled_total');
    const refusedBefore = await metric('inventory_streams_refused_total');
    const started = Date.now();
    const stalled = getProducts();
    stalled.on('error', () => undefined);
    const response = await new Promise<http.IncomingMessage>((resolve) => stalled.on('response', resolve));
    response.on('error', () => undefined);
    response.pause();
    // The service closes the socket; a reader that reads nothing cannot see that before it reads again.
    const closed = new Promise<number>((resolve) => streamed?.once('close', () => resolve(Date.now())));
    const waitingSince = await untilWaitingForTheReader(streamed!);

    expect(connectionsInUse()).toBe(0);
    expect(await metric('inventory_streams_active')).toBe(1);
    const refused = await request(ctx.app).get('/v1/products').set('Authorization', bearer());
    expectServerDeclined(refused, {
      status: 503,
      error: 'Service Unavailable',
      exception: 'TaskRejectedException',
      message: 'Streamed lists are limited to 1 at once on this instance, and all are in use; retry later',
      path: '/v1/products',
    });
    expect(refused.headers['retry-after']).toBe('5');

    // Cut once the reader took nothing for the stall timeout, which began before the wait was seen.
    const closedAt = await closed;
    expect(closedAt - started).toBeGreaterThanOrEqual(STALL_TIMEOUT_MS);
    expect(closedAt - waitingSince).toBeLessThan(STALL_TIMEOUT_MS + 1500);
    const received = await new Promise<{ text: string; complete: boolean }>((resolve) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('close', () => resolve({ text, complete: response.complete }));
      response.resume();
    });
    expect(response.statusCode).toBe(200);
    expect(received.complete).toBe(false);
    expect(received.text.startsWith('[{"pKey":')).toBe(true);
    expect(received.text.endsWith(']')).toBe(false);
    expect(await metric('inventory_streams_stalled_total')).toBe(stalledBefore + 1);
    expect(await metric('inventory_streams_refused_total')).toBe(refusedBefore + 1);
    expect(await metric('inventory_streams_active')).toBe(0);
    expect(connectionsInUse()).toBe(0);

    const next = await request(ctx.app).get('/v1/products').set('Authorization', bearer());
    expect(next.status).toBe(200);
    expect(next.body).toHaveLength(PRODUCTS);
  }, 30_000);
});
