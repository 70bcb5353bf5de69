import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';
import { eventually, processMemory, sleep } from './harness.js';

/**
 * D39's proof with real sockets: 20 Server-Sent Event streams, 20 JSON feed pages and 20 Product lists (10 whole
 * streamed lists, 10 pages of 1,000) whose clients never read, while 1,500 events of about 60 KB are committed. Every one of those connections must be closed
 * once it stalled for STREAM_STALL_MS (counted per kind, logged once each), a client that reads must receive every
 * event, and the instance's RSS stay bounded. The feed pages ask for the 1,500 events once they are committed, so
 * each has 90 MB to send and stalls (a long poll waiting at the head answers what the socket takes).
 *
 * D39 asks less than 100 MB, and that is the bound asserted. Measured since the feed reader holds no rows while it
 * reads, and reads and keeps few enough that its events die young: 63–84 MB over 20 runs at load average 1.3–6, 42 MB
 * with no stalled client (before, 78–95 MB). What grows is garbage promoted to the old generation until it is next
 * collected, whose timing moves the peak by ±10 MB between runs of one build.
 *
 * The instance runs with the heap its pod gets: Node sizes V8's heap from the container's memory limit, and the
 * manifest's 512 Mi gives an old generation of 256 MB. On this machine's memory V8 would size it at 4 GB and let
 * garbage grow to several times what is live before collecting; that is not what the streams hold.
 * STALLED overrides the 20 per kind.
 */
const STALLED_PER_KIND = Number(process.env.STALLED ?? 20);
const EVENTS = 1500;
const EVENTS_PER_COMMIT = 50;
const RESOURCE_CHARACTERS = 60_000;
const STALL_MS = 2000;
const PRODUCTS = 6000;
const MAX_GROWTH_BYTES = 100 * 1024 * 1024;
/** What Node gives V8's old generation in a container limited to 512 Mi (deploy/kubernetes/deployment.yaml). */
const POD_HEAP = '--max-old-space-size=256';

let database: TestDatabase;
let service: ServiceProcess;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  await database.pool.query(
    `INSERT INTO product (sku, base_unit_magnitude, base_unit_code, description)
     SELECT 'STALL-' || n, 1, 'PC', repeat('d', 4000) FROM generate_series(1, $1::int) AS n`,
    [PRODUCTS],
  );
  service = (
    await startServicesOnDatabase(database.url, 1, {
      NODE_OPTIONS: POD_HEAP,
      STREAM_STALL_MS: String(STALL_MS),
      STREAM_MAX_CONCURRENT: String(Math.max(1, STALLED_PER_KIND)),
      ...(process.env.STALL_BUFFER && { STREAM_BUFFER_BYTES: process.env.STALL_BUFFER }),
    })
  )[0]!;
}, 120_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  if (service) await stopServices([service]);
  await database?.drop();
});

/** Sends a GET and never reads the answer: the socket is paused before anything arrives. */
function neverReading(path: string, accept: string): net.Socket {
  const socket = net.connect(service.port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${bearer()}\r\nAccept: ${accept}\r\n\r\n`);
  sockets.push(socket);
  return socket;
}

/** An SSE client that reads everything; counts the events (blocks with data) it received. */
function readingStream(): { received: () => number } {
  const socket = net.connect(service.port, '127.0.0.1');
  socket.on('error', () => undefined);
  sockets.push(socket);
  socket.write(
    `GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${bearer()}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  let received = 0;
  let tail = '';
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    const blocks = (tail + text).split('\n\n');
    tail = blocks.pop()!;
    for (const block of blocks) if (/^event: /m.test(block) && /^data: /m.test(block)) received++;
  });
  return { received: () => received };
}

async function stalledCount(kind: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/actuator/prometheus`, { headers: { Authorization: bearer() } });
  const text = await response.text();
  const line = new RegExp(`^inventory_stream_connections_stalled_total\\{stream="${kind}"\\} (\\d+)$`, 'm').exec(text);
  return Number(line?.[1] ?? 0);
}

async function commitLargeEvents(): Promise<void> {
  const resource = { sku: 'STALL-1', padding: 'p'.repeat(RESOURCE_CHARACTERS) };
  for (let committed = 0; committed < EVENTS; committed += EVENTS_PER_COMMIT) {
    const events = Array.from({ length: EVENTS_PER_COMMIT }, () => ({
      type: 'product.event.updated' as const,
      key: randomUUID(),
      resource,
    }));
    await withTransaction(database.pool, (tx) => appendEvents(tx, events, `stall-${committed}`));
  }
}

describe('streams whose clients never read (D39)', () => {
  it('closes each stalled connection, keeps the instance bounded and still serves a reader everything', async () => {
    await sleep(1000);
    const before = await processMemory(service.child.pid, 'VmRSS');
    const { rows } = await database.pool.query<{ head: string }>(
      'SELECT sequenced_through AS head FROM event_feed_state WHERE id = 1',
    );
    const reader = readingStream();
    for (let i = 0; i < STALLED_PER_KIND; i++) {
      neverReading('/v1/events', 'text/event-stream');
      // Half the whole streamed list, half pages of 1,000 (4 MB each).
      neverReading(i % 2 === 0 ? '/v1/products' : '/v1/products?limit=1000', 'application/json');
    }
    await sleep(500);
    let peak = 0;
    const sampling = setInterval(() => {
      void processMemory(service.child.pid, 'VmRSS').then((rss) => (peak = Math.max(peak, rss)));
    }, 100);
    try {
      await commitLargeEvents();
      for (let i = 0; i < STALLED_PER_KIND; i++) {
        neverReading(`/v1/events?after=${rows[0]!.head}&limit=1000`, 'application/json');
      }
      await eventually('the reading client to receive every event', () => reader.received() >= EVENTS, 60_000);
      await eventually(
        'every stalled connection to be closed',
        async () =>
          (await stalledCount('events')) === STALLED_PER_KIND &&
          (await stalledCount('feed')) === STALLED_PER_KIND &&
          (await stalledCount('list')) === STALLED_PER_KIND,
        STALL_MS + 20_000,
      );
    } finally {
      clearInterval(sampling);
      const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
      const closed = await Promise.all(['events', 'feed', 'list'].map(stalledCount));
      // eslint-disable-next-line no-console -- the figures go to docs/decisions.md D39
      console.log(`RSS before ${mb(before)} MB, peak ${mb(peak)} MB; events read ${reader.received()}; cut ${closed}`);
    }
    const growth = peak - before;
    expect(reader.received()).toBe(EVENTS);
    expect(growth).toBeLessThan(MAX_GROWTH_BYTES);
    const stalledLogs = (): unknown[] =>
      service
        .logEntries()
        .filter((entry) => entry.msg === 'stream closed: its client took nothing within STREAM_STALL_MS');
    // The counter is read over HTTP; the log line of the last stall may reach the service's stdout a moment later.
    await eventually('a log line for every stall', () => stalledLogs().length >= 3 * STALLED_PER_KIND, 5000).catch(
      () => undefined,
    );
    expect(stalledLogs()).toHaveLength(3 * STALLED_PER_KIND);
  }, 120_000);
});
