import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents, type NewEvent } from '../../src/events/outbox.js';
import { listOutboxParts } from '../../src/events/partitions.js';
import { pruneOutbox } from '../../src/events/retention.js';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { expectServerDeclined, JSON_UTF8, UUID } from '../support/http.js';
import { bearer } from '../support/tokens.js';

// Small parts of the outbox (migration 0014), so that a test fills one.
const PART_SIZE = 1000;
const ctx = useTestApp({ EVENTS_PARTITION_SIZE: String(PART_SIZE) });

interface FeedEvent {
  id: string;
  type: string;
  occurredAt: string;
  requestId: string;
  resource: Record<string, unknown>;
  cursor: string;
}

interface FeedPage {
  events: FeedEvent[];
  next: string;
}

function feed(query = ''): request.Test {
  return request(ctx.app).get(`/v1/events${query}`).set('Authorization', bearer()).set('Accept', 'application/json');
}

function productEvent(name: string): NewEvent {
  return { type: 'product.event.created', key: randomUUID(), resource: { sku: name } };
}

/** Commits events straight into the outbox, as a feature's transaction does. */
async function commitEvents(events: NewEvent[], requestId: string = randomUUID()): Promise<void> {
  await withTransaction(ctx.db.pool, (tx) => appendEvents(tx, events, requestId));
}

async function head(): Promise<string> {
  let next = '';
  for (let page: FeedPage | undefined; !page || page.events.length > 0;) {
    page = (await feed(next ? `?after=${next}&limit=1000` : '?limit=1000')).body as FeedPage;
    next = page.next;
  }
  return next;
}

/** Follows `next` until the feed has shown `count` events, waiting for them to be numbered. */
async function readEvents(after: string, count: number): Promise<FeedEvent[]> {
  const seen: FeedEvent[] = [];
  let cursor = after;
  while (seen.length < count) {
    const response = await feed(`?after=${cursor}&limit=1000&wait=5`);
    expect(response.status).toBe(200);
    const page = response.body as FeedPage;
    if (page.events.length === 0) throw new Error(`the feed stopped after ${seen.length} of ${count} events`);
    seen.push(...page.events);
    cursor = page.next;
  }
  return seen;
}

describe('GET /v1/events (D29)', () => {
  it('answers committed events in commit order with their ids, request id, resource and cursors', async () => {
    const start = await head();
    await commitEvents([productEvent('A'), productEvent('B')], 'request-feed-1');

    const events = await readEvents(start, 2);

    expect(events.map((event) => [event.type, event.resource, event.requestId])).toEqual([
      ['product.event.created', { sku: 'A' }, 'request-feed-1'],
      ['product.event.created', { sku: 'B' }, 'request-feed-1'],
    ]);
    for (const event of events) {
      expect(Object.keys(event)).toEqual(['id', 'type', 'occurredAt', 'requestId', 'resource', 'cursor']);
      expect(event.id).toMatch(UUID);
      expect(event.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(Number(events[1]!.cursor)).toBe(Number(events[0]!.cursor) + 1);
  });

  it('pages with limit, and next continues exactly where the page ended', async () => {
    const start = await head();
    await commitEvents(['P1', 'P2', 'P3'].map(productEvent));
    await readEvents(start, 3);

    const first = (await feed(`?after=${start}&limit=2`)).body as FeedPage;
    const second = (await feed(`?after=${first.next}&limit=2`)).body as FeedPage;

    expect(first.events.map((event) => event.resource.sku)).toEqual(['P1', 'P2']);
    expect(first.next).toBe(first.events[1]!.cursor);
    expect(second.events.map((event) => event.resource.sku)).toEqual(['P3']);
  });

  it('answers an empty list and the same cursor when nothing is newer', async () => {
    const cursor = await head();

    const response = await feed(`?after=${cursor}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual({ events: [], next: cursor });
  });

  it('treats empty query values as absent, as a HAL client expanding the template without them sends', async () => {
    const response = await feed('?after=&limit=&wait=');

    expect(response.status).toBe(200);
  });

  it('answers a long poll as soon as an event commits', async () => {
    const cursor = await head();
    const started = Date.now();
    const waiting = feed(`?after=${cursor}&wait=20`).then((response) => response);
    setTimeout(() => void commitEvents([productEvent('LATE')]), 300);

    const response = await waiting;

    expect(response.status).toBe(200);
    expect((response.body as FeedPage).events.map((event) => event.resource.sku)).toEqual(['LATE']);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('answers a long poll after wait seconds with an empty list and the same cursor', async () => {
    const cursor = await head();

    const response = await feed(`?after=${cursor}&wait=1`);

    expect(response.body).toEqual({ events: [], next: cursor });
  });

  it.each([
    ['after=abc', 'after'],
    ['after=-1', 'after'],
    ['after=01', 'after'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=x', 'limit'],
    ['wait=31', 'wait'],
    ['wait=-1', 'wait'],
  ])('answers 400 core.validation.error for %s', async (query, path) => {
    const response = await feed(`?${query}`);

    expect(response.status).toBe(400);
    expect(response.body.messageKey).toBe('core.validation.error');
    expect(response.body.obj).toEqual([path]);
  });

  it('answers 400 for a misspelled parameter instead of starting from the oldest event', async () => {
    const response = await feed('?afterr=5');

    expect(response.status).toBe(400);
    expect(response.body.messageKey).toBe('core.validation.error');
  });

  it('answers 400 for a cursor past the newest event', async () => {
    const cursor = Number(await head());

    const response = await feed(`?after=${cursor + 1000}`);

    expectValidationError(response, [['after', 'is past the newest event: not a cursor of this feed']]);
  });

  it('answers 401 without a token', async () => {
    const response = await request(ctx.app).get('/v1/events');

    expectServerDeclined(response, {
      status: 401,
      error: 'Unauthorized',
      exception: 'AuthenticationCredentialsNotFoundException',
      message: /authentication is required/i,
      path: '/v1/events',
    });
  });

  it('answers 410 cursorExpired for a cursor older than the events kept, and the oldest kept without one', async () => {
    const start = await head();
    await commitEvents([productEvent('OLD-1'), productEvent('OLD-2')]);
    const [old] = await readEvents(start, 1);
    // Fills the part the old events are in: only whole parts are removed.
    await commitEvents(Array.from({ length: PART_SIZE }, (_, n) => productEvent(`FILL-${n}`)));
    await readEvents(old!.cursor, PART_SIZE + 1);
    const oldPart = (await listOutboxParts(ctx.db.pool)).find((part) => part.to > Number(old!.cursor))!;
    await pruneOutbox(ctx.db.pool, new Date(Date.now() + 60_000), undefined);
    await commitEvents([productEvent('KEPT')]);

    const fromOldest = await readEventsWithoutCursor();
    const expired = await feed(`?after=${old!.cursor}`);

    expectApiDeclined(expired, {
      status: 410,
      messageKey: 'owms.wms.inv.events.cursorExpired',
      message: expect.stringContaining(`Cursor [${old!.cursor}] is older than the events kept`) as unknown as string,
      obj: [old!.cursor],
      class: 'String',
    });
    expect(Number(fromOldest[0]!.cursor)).toBeGreaterThanOrEqual(oldPart.to);
    expect(fromOldest.map((event) => event.resource.sku)).not.toContain('OLD-2');
  });
});

async function readEventsWithoutCursor(): Promise<FeedEvent[]> {
  const response = await feed('?wait=5');
  expect(response.status).toBe(200);
  return (response.body as FeedPage).events;
}
