import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents, type NewEvent } from '../../src/events/outbox.js';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { bearer, TEST_SECRET } from '../support/tokens.js';
import { openStream } from './sse-client.js';

const ctx = useTestApp({ EVENT_STREAMS_HEARTBEAT_MS: '60000' });
let server: http.Server;

beforeAll(async () => {
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const auth = { Authorization: bearer() };

/** One event of each family, each naming `sku` where its resource does. */
function familyEvents(sku: string): NewEvent[] {
  return [
    { type: 'product.event.updated', key: randomUUID(), resource: { pKey: randomUUID(), sku } },
    { type: 'lu.event.created', key: randomUUID(), resource: { products: [{ product: { sku } }] } },
    { type: 'pu.event.moved', key: randomUUID(), resource: { product: { pKey: randomUUID(), sku } } },
    { type: 'allocation.event.reserved', key: randomUUID(), resource: { reservationId: randomUUID(), sku } },
  ];
}

async function commit(events: NewEvent[]): Promise<void> {
  await withTransaction(ctx.db.pool, (tx) => appendEvents(tx, events, `filters-${randomUUID()}`));
}

async function head(): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ head: string }>(
    'SELECT sequenced_through AS head FROM event_feed_state WHERE id = 1',
  );
  return Number(rows[0]!.head);
}

/** Waits until everything committed is numbered; answers the head. */
async function numbered(): Promise<number> {
  for (;;) {
    const { rows } = await ctx.db.pool.query<{ pending: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM event_outbox WHERE position IS NULL) AS pending',
    );
    if (!rows[0]!.pending) return head();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Page {
  events: { type: string; resource: Record<string, unknown>; cursor: string }[];
  next: string;
}

async function page(query: string): Promise<Page> {
  const response = await request(ctx.app).get(`/v1/events${query}`).set(auth);
  expect(response.status).toBe(200);
  return response.body as Page;
}

describe('GET /v1/events?types= and ?sku= (D39)', () => {
  it.each([
    ['product.*', 'product.event.updated'],
    ['lu.*', 'lu.event.created'],
    ['pu.event.*', 'pu.event.moved'],
    ['allocation.event.reserved', 'allocation.event.reserved'],
  ])('answers only the events of types=%s, and next counts the whole feed', async (types, type) => {
    const after = await numbered();
    await commit([...familyEvents(`T-${randomUUID()}`), ...familyEvents(`T-${randomUUID()}`)]);
    const through = await numbered();

    const answer = await page(`?after=${after}&types=${encodeURIComponent(types)}`);

    expect(answer.events.map((event) => event.type)).toEqual([type, type]);
    expect(answer.next).toBe(String(through));
  });

  it('answers only the events whose resource names the SKU, of every family, and nothing else', async () => {
    const sku = `S-${randomUUID()}`;
    const after = await numbered();
    await commit([
      ...familyEvents(`OTHER-${randomUUID()}`),
      ...familyEvents(sku),
      ...familyEvents(`O-${randomUUID()}`),
    ]);
    const through = await numbered();

    const answer = await page(`?after=${after}&sku=${encodeURIComponent(sku)}`);

    expect(answer.events.map((event) => event.type)).toEqual([
      'product.event.updated',
      'lu.event.created',
      'pu.event.moved',
      'allocation.event.reserved',
    ]);
    expect(answer.next).toBe(String(through));
    const both = await page(`?after=${after}&sku=${encodeURIComponent(sku)}&types=pu.*,allocation.*`);
    expect(both.events.map((event) => event.type)).toEqual(['pu.event.moved', 'allocation.event.reserved']);
  });

  it('answers an empty page whose next is the head when nothing matches, so the reader resumes past it', async () => {
    const after = await numbered();
    await commit(familyEvents(`N-${randomUUID()}`));
    const through = await numbered();

    expect(await page(`?after=${after}&sku=NO-SUCH-SKU`)).toEqual({ events: [], next: String(through) });
  });

  it.each([
    [
      'types',
      'types=pu.event.teleported',
      'names no event type: [pu.event.teleported] (types are e.g. pu.event.moved, or a prefix as pu.*)',
    ],
    [
      'types',
      'types=nothing.*',
      'names no event type: [nothing.*] (types are e.g. pu.event.moved, or a prefix as pu.*)',
    ],
    ['types', `types=${Array.from({ length: 51 }, () => 'pu.*').join(',')}`, 'must name at most 50 event types'],
    ['sku', `sku=${'x'.repeat(256)}`, 'Too big: expected string to have <=255 characters'],
    ['sku', 'sku=A%01B', 'must not contain control, invisible or bidirectional formatting characters'],
  ])('answers 400 naming %s for %s', async (parameter, query, message) => {
    const response = await request(ctx.app).get(`/v1/events?${query}`).set(auth);
    expectValidationError(response, [[parameter, message]]);
  });
});

describe('GET /v1/events as a filtered, compressed event stream (D39)', () => {
  it('opens with an id: of the current position before any event', async () => {
    const position = await numbered();
    const stream = await openStream(server, '', auth);
    await stream.until((blocks) => blocks.length > 0);
    expect(stream.blocks[0]).toEqual({ fields: { retry: '2000', id: String(position) } });
    stream.close();
  });

  it('sends only the SKU’s events, moves its id past the others, and a reconnect resumes exactly after it', async () => {
    const sku = `R-${randomUUID()}`;
    const stream = await openStream(server, `?sku=${encodeURIComponent(sku)}`, auth);
    await stream.until((blocks) => blocks.length > 0);
    await commit(familyEvents(sku).slice(0, 1));
    await commit(familyEvents(`X-${randomUUID()}`));
    const through = await numbered();
    await stream.until(() => stream.lastEventId() === String(through));
    expect(stream.events().map((block) => block.fields.event)).toEqual(['product.event.updated']);
    stream.close();

    await commit(familyEvents(sku).slice(2, 3));
    const again = await openStream(server, `?sku=${encodeURIComponent(sku)}`, {
      ...auth,
      'Last-Event-ID': stream.lastEventId()!,
    });
    await again.until(() => again.events().length === 1);
    expect(again.events()[0]!.fields.event).toBe('pu.event.moved');
    expect(Number(again.events()[0]!.fields.id)).toBeGreaterThan(through);
    again.close();
  });

  it('is gzip-compressed when Accept-Encoding allows, each batch flushed as it is sent', async () => {
    const stream = await openStream(server, '?types=product.*', { ...auth, 'Accept-Encoding': 'gzip' });
    expect(stream.headers['content-encoding']).toBe('gzip');
    await stream.until((blocks) => blocks.length > 0);
    await commit(familyEvents(`G-${randomUUID()}`));
    await stream.until(() => stream.events().length === 1, 5000);
    expect(stream.events()[0]!.fields.event).toBe('product.event.updated');
    stream.close();
  });
});

/** A token the service accepts for `secondsLeft` more seconds: past its exp, within the 30 s clock tolerance. */
function tokenEndingIn(secondsLeft: number): string {
  const now = Math.floor(Date.now() / 1000);
  const exp = now - 30 + secondsLeft;
  return jwt.sign({ sub: 'expiring', iat: exp - 60, exp }, TEST_SECRET, { algorithm: 'HS256' });
}

describe('streams that end with their token (D39)', () => {
  it('ends an event stream within a second of its token’s end (exp + tolerance), with a last comment saying so', async () => {
    const stream = await openStream(server, '', { Authorization: bearer(tokenEndingIn(2)) });
    const endsAt = (Math.floor(Date.now() / 1000) + 2) * 1000;
    await stream.ended;
    expect(Math.abs(Date.now() - endsAt)).toBeLessThan(1500);
    expect(stream.blocks.at(-1)).toEqual({ fields: {}, comment: 'the token expired; reconnect with a new one' });
  });

  it('answers a long poll when its token ends, not after the whole wait', async () => {
    const started = Date.now();
    const response = await request(ctx.app)
      .get(`/v1/events?after=${await numbered()}&wait=30&sku=NONE`)
      .set('Authorization', bearer(tokenEndingIn(2)));
    expect(response.status).toBe(200);
    expect((response.body as Page).events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
