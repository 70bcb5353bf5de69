import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents, type NewEvent } from '../../src/events/outbox.js';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';

const HEARTBEAT_MS = 300;
const MAX_STREAMS = 3;
const ctx = useTestApp({
  EVENT_STREAMS_MAX: String(MAX_STREAMS),
  EVENT_STREAMS_HEARTBEAT_MS: String(HEARTBEAT_MS),
});
let server: http.Server;

beforeAll(async () => {
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface StreamedEvent {
  id: string;
  event: string;
  data: string;
}

interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: StreamedEvent[];
  comments: string[];
  /** Resolves once `count` events arrived; fails after `ms`. */
  waitForEvents(count: number, ms?: number): Promise<void>;
  waitForComment(ms: number): Promise<void>;
  close(): void;
}

function openStream(query = '', headers: Record<string, string> = {}): Promise<OpenStream> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: `/v1/events${query}`,
        headers: { Authorization: bearer(), Accept: 'text/event-stream', ...headers },
      },
      (res) => {
        const stream: OpenStream = {
          status: res.statusCode!,
          headers: res.headers,
          events: [],
          comments: [],
          waitForEvents: (count, ms = 20_000) => until(() => stream.events.length >= count, ms, `${count} events`),
          waitForComment: (ms) => {
            const before = stream.comments.length;
            return until(() => stream.comments.length > before, ms, 'a comment');
          },
          close: () => req.destroy(),
        };
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          buffered += text;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const block = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            if (block.startsWith(':')) stream.comments.push(block);
            else if (block.startsWith('id: ')) stream.events.push(parseFrame(block));
          }
        });
        res.on('error', () => undefined);
        resolve(stream);
      },
    );
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
  });
}

function parseFrame(block: string): StreamedEvent {
  const fields = Object.fromEntries(
    block.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
  return { id: fields.id ?? '', event: fields.event ?? '', data: fields.data ?? '' };
}

async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function anEvent(label: string): NewEvent {
  return { type: 'product.event.updated', key: randomUUID(), resource: { sku: label } };
}

async function commitEvents(events: NewEvent[]): Promise<void> {
  await withTransaction(ctx.db.pool, (tx) => appendEvents(tx, events, randomUUID()));
}

/** The cursor after every event committed so far, as the JSON feed answers it once they are numbered. */
async function feedHead(): Promise<string> {
  let next = '';
  for (;;) {
    const response = await request(ctx.app)
      .get(`/v1/events?limit=1000${next ? `&after=${next}` : ''}`)
      .set('Authorization', bearer());
    const page = response.body as { events: unknown[]; next: string };
    if (page.events.length === 0) return page.next;
    next = page.next;
  }
}

async function jsonFeed(after: string): Promise<{ cursor: string; type: string }[]> {
  const response = await request(ctx.app).get(`/v1/events?after=${after}&limit=1000`).set('Authorization', bearer());
  return (response.body as { events: { cursor: string; type: string }[] }).events;
}

describe('GET /v1/events as Server-Sent Events (D33)', () => {
  it('streams each event with its cursor as id, its type as event, and the feed JSON as data', async () => {
    const after = await feedHead();
    const stream = await openStream(`?after=${after}`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers['cache-control']).toBe('no-cache');
      expect(stream.headers['content-encoding']).toBeUndefined();
      await commitEvents([anEvent('first'), anEvent('second')]);
      await stream.waitForEvents(2);

      const response = await request(ctx.app).get(`/v1/events?after=${after}`).set('Authorization', bearer());
      const fed = (response.body as { events: { cursor: string; type: string }[] }).events;
      expect(stream.events).toEqual(
        fed.map((event) => ({ id: event.cursor, event: event.type, data: JSON.stringify(event) })),
      );
      expect(fed.map((event) => (event as unknown as { resource: { sku: string } }).resource.sku)).toEqual([
        'first',
        'second',
      ]);
    } finally {
      stream.close();
    }
  });

  it('starts a stream without a cursor with the next event committed, not with the history', async () => {
    const start = await feedHead();
    await commitEvents([anEvent('history')]);
    // The history is numbered (in the feed) before the stream opens; numbering follows a commit by a moment.
    await expect.poll(async () => (await jsonFeed(start)).length, { timeout: 10_000 }).toBe(1);
    const stream = await openStream();
    try {
      await commitEvents([anEvent('next')]);
      await stream.waitForEvents(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        stream.events.map((event) => (JSON.parse(event.data) as { resource: { sku: string } }).resource.sku),
      ).toEqual(['next']);
    } finally {
      stream.close();
    }
  });

  it('resumes after Last-Event-ID, which wins over after', async () => {
    const start = await feedHead();
    await commitEvents([anEvent('before')]);
    const first = await openStream(`?after=${start}`);
    await first.waitForEvents(1);
    const [seen] = first.events;
    first.close();
    await commitEvents([anEvent('while away')]);

    const resumed = await openStream(`?after=${start}`, { 'Last-Event-ID': seen!.id });
    try {
      await resumed.waitForEvents(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        resumed.events.map((event) => (JSON.parse(event.data) as { resource: { sku: string } }).resource.sku),
      ).toEqual(['while away']);
    } finally {
      resumed.close();
    }
  });

  it('shows every event exactly once and in commit order while 8 writers commit at once', async () => {
    const after = await feedHead();
    const stream = await openStream(`?after=${after}&limit=7`);
    try {
      const writers = Array.from({ length: 8 }, (_, writer) =>
        (async () => {
          for (let round = 0; round < 15; round++) {
            await commitEvents([anEvent(`w${writer}-${round}-a`), anEvent(`w${writer}-${round}-b`)]);
          }
        })(),
      );
      await Promise.all(writers);
      await stream.waitForEvents(8 * 15 * 2);
      await new Promise((resolve) => setTimeout(resolve, 300));

      const fed = await jsonFeed(after);
      expect(fed).toHaveLength(240);
      expect(stream.events.map((event) => event.id)).toEqual(fed.map((event) => event.cursor));
      expect(
        new Set(stream.events.map((event) => JSON.parse(event.data) as { id: string }).map((e) => e.id)).size,
      ).toBe(240);
    } finally {
      stream.close();
    }
  });

  it('sends a comment after a quiet heartbeat interval and holds no database connection while idle', async () => {
    const stream = await openStream(`?after=${await feedHead()}`);
    try {
      await stream.waitForComment(HEARTBEAT_MS * 5);
      expect(stream.comments.at(-1)).toBe(': keep-alive');
      await stream.waitForComment(HEARTBEAT_MS * 5);
      expect(ctx.db.pool.totalCount - ctx.db.pool.idleCount).toBe(0);
    } finally {
      stream.close();
    }
  });

  it('refuses a stream beyond EVENT_STREAMS_MAX with 503 and Retry-After, and admits one again once one closes', async () => {
    const after = await feedHead();
    const open = await Promise.all(Array.from({ length: MAX_STREAMS }, () => openStream(`?after=${after}`)));
    expect(open.map((stream) => stream.status)).toEqual([200, 200, 200]);

    const refused = await request(server)
      .get('/v1/events')
      .set('Authorization', bearer())
      .set('Accept', 'text/event-stream');
    expectServerDeclined(refused, {
      status: 503,
      error: 'Service Unavailable',
      exception: 'TaskRejectedException',
      message: `Event streams are limited to ${MAX_STREAMS} at once on this instance, and all are in use; retry later`,
      path: '/v1/events',
    });
    expect(refused.headers['retry-after']).toBe('5');

    open[0]!.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await openStream(`?after=${after}`);
    expect(again.status).toBe(200);
    for (const stream of [...open, again]) stream.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it('answers the JSON feed, not a stream, to an Accept that only matches text/event-stream by a wildcard', async () => {
    const response = await request(ctx.app)
      .get('/v1/events?limit=1')
      .set('Authorization', bearer())
      .set('Accept', '*/*');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const textOnly = await request(ctx.app).get('/v1/events').set('Authorization', bearer()).set('Accept', 'text/*');
    expect(textOnly.status).toBe(406);
  });

  it('answers a Last-Event-ID that is no cursor with 400 naming it', async () => {
    const response = await request(ctx.app)
      .get('/v1/events')
      .set('Authorization', bearer())
      .set('Accept', 'text/event-stream')
      .set('Last-Event-ID', 'abc');

    expectValidationError(response, [['Last-Event-ID', 'must be a cursor this feed answered']]);
  });
});
