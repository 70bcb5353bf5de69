import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Response, Test } from 'supertest';
import { Connection } from 'rabbitmq-client';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { BROKER_URL, describeWithBroker, listedExchange, useBrokerExclusively } from '../support/broker.js';
import { aProduct, type Json } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { consumeExchange, deleteExchange, type EventConsumer, type Received } from '../support/event-consumer.js';
import {
  commitMarker,
  feedHead,
  health,
  metricValue,
  outboxEvents,
  readFeedUntil,
  startInstance,
  waitForBacklog,
  waitForBroker,
  type EventsInstance,
  type FeedEvent,
} from '../support/events-app.js';
import { closedPort } from '../support/ports.js';
import { givenProduct as givenSeededProduct } from '../support/stock.js';
import {
  allocate,
  call,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  givenUnitsOnLocation,
  pc,
  release,
  type AllocationElement,
} from '../support/stock-api.js';

/** D28: what reaches a queue bound to the exchange is exactly what the feed (D29) shows, message by message. */
const exchange = `inventory-test-relay-${randomUUID()}`;

/** D28: the header `owms_event_type` of each type (D27). */
const OWMS_EVENT_TYPE: Record<string, string> = {
  'product.event.created': 'created',
  'product.event.updated': 'updated',
  'product.event.deleted': 'deleted',
  'lu.event.created': 'created',
  'lu.event.changed': 'changed',
  'pu.event.created': 'created',
  'pu.event.moved': 'moved',
  'pu.event.changed': 'changed',
  'pu.event.deleted': 'deleted',
  'allocation.event.reserved': 'reserved',
  'allocation.event.released': 'released',
};

/** The message D28 says a consumer receives for a feed event. */
function messageFor(event: FeedEvent): Received {
  return {
    routingKey: event.type,
    messageId: event.id,
    correlationId: event.requestId ?? undefined,
    ownsEventType: OWMS_EVENT_TYPE[event.type],
    // Tracing is off here: no trace to carry on (D36).
    traceparent: undefined,
    deliveryMode: 2,
    contentType: 'application/json',
    timestamp: Math.floor(Date.parse(event.occurredAt) / 1000),
    redelivered: false,
    body: event.resource,
  };
}

describeWithBroker('the relay to RabbitMQ (D28)', () => {
  useBrokerExclusively();
  afterAll(() => deleteExchange(exchange));
  const ctx = useTestApp({ AMQP_URL: BROKER_URL, AMQP_EXCHANGE: exchange });
  let consumer: EventConsumer;
  let start: string;
  let declared: { type: string; durable: boolean } | undefined;

  beforeAll(async () => {
    // The relay declares the exchange as soon as it connects, before any event: a queue can be bound from then on.
    await waitForBroker(ctx.app, 'connected');
    declared = await listedExchange(exchange);
    consumer = await consumeExchange(exchange);
    start = await feedHead(ctx.app);
  });
  afterAll(() => consumer?.close());

  /** Everything the queue received since it was bound, against everything the feed shows since then. */
  async function deliveredUpTo(marker: string): Promise<{ feed: FeedEvent[]; received: Received[] }> {
    await consumer.waitForId(marker);
    return { feed: await readFeedUntil(ctx.app, start, marker), received: [...consumer.received] };
  }

  interface Row {
    readonly name: string;
    /** Seeds what the operation needs (their events go out too, under other request ids). */
    readonly given: () => Promise<Json>;
    readonly act: (given: Json) => Test;
    readonly status: number;
    /** The operation's events in feed order: type and the parts of the resource that name it. */
    readonly events: (given: Json, response: Response) => [string, Json][];
  }

  const rows: Row[] = [
    {
      name: 'a bulk create of three Products',
      given: async () => ({ products: [aProduct(), aProduct(), aProduct()] }),
      act: (given) => call(ctx, 'post', '/v1/products').send(given.products as Json[]),
      status: 201,
      events: (given) =>
        (given.products as Json[]).map((product) => ['product.event.created', { sku: product.sku as string }]),
    },
    {
      name: 'a Product update',
      given: async () => ({ ...(await givenSeededProduct(ctx)) }),
      act: (given) =>
        call(ctx, 'put', '/v1/products').send(
          aProduct({ pKey: given.pKey, sku: given.sku, ol: 0, description: 'changed' }),
        ),
      status: 200,
      events: (given) => [['product.event.updated', { pKey: given.pKey, sku: given.sku, description: 'changed' }]],
    },
    {
      name: 'a Product delete',
      given: async () => ({ ...(await givenSeededProduct(ctx)) }),
      act: (given) => call(ctx, 'delete', `/v1/products/${given.pKey as string}`),
      status: 204,
      events: (given) => [['product.event.deleted', { pKey: given.pKey, sku: given.sku }]],
    },
    {
      name: 'a PackagingUnit created on a Location',
      given: async () => ({ sku: await givenProduct(ctx), location: await givenLocation(ctx) }),
      act: (given) =>
        call(ctx, 'post', '/v1/packaging-units').send([
          {
            product: { sku: given.sku },
            quantity: pc(5),
            actualLocation: { locationId: (given.location as Json).locationId },
          },
        ]),
      status: 201,
      events: (given, response) => [
        [
          'pu.event.created',
          { pKey: (response.body as Json[])[0]!.pKey, product: expect.objectContaining({ sku: given.sku }) },
        ],
      ],
    },
    {
      name: 'a PackagingUnit moved to another Location',
      given: async () => {
        const sku = await givenProduct(ctx);
        const from = await givenLocation(ctx);
        const [unit] = await givenUnitsOnLocation(ctx, from.locationId, sku, [{ quantity: pc(5) }]);
        return { sku, pKey: unit!.pKey, to: (await givenLocation(ctx)).locationId };
      },
      act: (given) =>
        call(ctx, 'put', `/v1/packaging-units/${given.pKey as string}`).send({
          pKey: given.pKey,
          product: { sku: given.sku },
          actualLocation: { locationId: given.to },
        }),
      status: 200,
      events: (given) => [
        ['pu.event.moved', { pKey: given.pKey, actualLocation: expect.objectContaining({ locationId: given.to }) }],
      ],
    },
    {
      name: 'a reservation',
      given: async () => {
        const sku = await givenProduct(ctx);
        const bk = await givenTransportUnitOn(ctx, (await givenLocation(ctx)).locationId);
        const [unit] = await givenUnitsIn(ctx, bk, '1', sku, [{ quantity: pc(10) }]);
        return { sku, pKey: unit!.pKey };
      },
      act: (given) => allocate(ctx, { sku: given.sku, qty: pc(4) }),
      status: 200,
      events: (given, response) => [
        [
          'allocation.event.reserved',
          {
            reservationId: (response.body as AllocationElement[])[0]!.reservationId,
            sku: given.sku,
            units: [{ pKey: given.pKey, qty: pc(4) }],
          },
        ],
        ['pu.event.changed', { pKey: given.pKey, qtyAvailable: pc(6) }],
      ],
    },
    {
      name: 'the release of a reservation',
      given: async () => {
        const sku = await givenProduct(ctx);
        const bk = await givenTransportUnitOn(ctx, (await givenLocation(ctx)).locationId);
        const [unit] = await givenUnitsIn(ctx, bk, '1', sku, [{ quantity: pc(10) }]);
        const reserved = await allocate(ctx, { sku, qty: pc(4) });
        return { sku, pKey: unit!.pKey, reservationId: (reserved.body as AllocationElement[])[0]!.reservationId };
      },
      act: (given) => release(ctx, given.reservationId as string),
      status: 204,
      events: (given) => [
        ['allocation.event.released', { reservationId: given.reservationId, sku: given.sku }],
        ['pu.event.changed', { pKey: given.pKey, qtyAvailable: pc(10) }],
      ],
    },
    {
      name: 'a bulk create refused with 409 for a SKU that exists',
      given: async () => ({ products: [aProduct(), aProduct({ sku: await givenProduct(ctx) })] }),
      act: (given) => call(ctx, 'post', '/v1/products').send(given.products as Json[]),
      status: 409,
      events: () => [],
    },
  ];

  it.each(rows)('publishes exactly the events the feed shows for $name', async (row) => {
    const given = await row.given();
    const requestId = `relay-${randomUUID()}`;

    const response = await row.act(given).set('X-Request-Id', requestId);
    const marker = await commitMarker(ctx.db.pool, requestId);
    const { feed, received } = await deliveredUpTo(marker);

    expect(response.status).toBe(row.status);
    const own = feed.filter((event) => event.requestId === requestId);
    const expected = row.events(given, response);
    expect(own.map((event) => event.type)).toEqual(expected.map(([type]) => type));
    own.forEach((event, i) => expect(event.resource).toMatchObject(expected[i]![1]));
    // One message per event, in the feed's order, with D28's properties, and nothing else.
    expect(received).toEqual(feed.map(messageFor));
  });

  it('publishes nothing more once a refused request is followed by a delivered marker', async () => {
    const existing = await givenProduct(ctx);
    const requestId = `refused-${randomUUID()}`;

    const refused = await call(ctx, 'post', '/v1/products')
      .set('X-Request-Id', requestId)
      .send([aProduct(), aProduct({ sku: existing })]);
    const marker = await commitMarker(ctx.db.pool, requestId);
    await consumer.waitForId(marker);
    const count = consumer.received.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(refused.status).toBe(409);
    expect(consumer.received.length).toBe(count);
    expect(consumer.received.at(-1)!.messageId).toBe(marker);
    expect(consumer.received.filter((message) => message.correlationId === requestId)).toEqual([]);
  });

  it('publishes a backlog larger than the batches it keeps in flight once each, in feed order', async () => {
    const from = await feedHead(ctx.app);
    const requestId = `backlog-${randomUUID()}`;
    // 4,500 events: more than the relay's 3 batches of 1,000 awaiting confirms, so batches follow batches.
    const created = await call(ctx, 'post', '/v1/products')
      .set('X-Request-Id', requestId)
      .send(Array.from({ length: 4500 }, () => aProduct()));
    const marker = await commitMarker(ctx.db.pool, 'backlog');
    await consumer.waitForId(marker, 30_000);

    const feed = await readFeedUntil(ctx.app, from, marker);
    const inFeed = new Set(feed.map((event) => event.id));
    const received = consumer.received.filter((message) => inFeed.has(message.messageId ?? ''));
    expect(created.status).toBe(201);
    expect(feed.filter((event) => event.requestId === requestId)).toHaveLength(4500);
    expect(received.map((message) => message.messageId)).toEqual(feed.map((event) => event.id));
  });

  it('declares the exchange as a durable topic exchange', () => {
    expect(declared).toEqual({ type: 'topic', durable: true });
  });

  it('shows the events component UP with nothing waiting, and counts what it published', async () => {
    const marker = await commitMarker(ctx.db.pool, 'health');
    await consumer.waitForId(marker);

    const body = await waitForBacklog(ctx.app, 0);
    const published = await metricValue(ctx.app, 'inventory_events_published_total');
    const backlog = await metricValue(ctx.app, 'inventory_events_outbox_backlog');

    expect(body).toEqual({
      status: 'UP',
      components: {
        events: {
          status: 'UP',
          details: { exchange, broker: 'connected', backlog: 0, oldestUnsentAgeSeconds: 0 },
        },
      },
    });
    // Everything in the outbox went out once, to the queue bound before the first event.
    expect(published).toBe((await outboxEvents(ctx.db.pool)).size);
    expect(published).toBe(consumer.received.length);
    expect(backlog).toBe(0);
  });

  it('answers health at once, backlog included, while every request connection is taken (issue 15)', async () => {
    const pool = ctx.db.pool;
    const taken: pg.PoolClient[] = [];
    try {
      while (pool.totalCount < pool.options.max || pool.idleCount > 0) taken.push(await pool.connect());
      const started = performance.now();
      const { status, body } = await health(ctx.app);
      const healthMs = performance.now() - started;

      expect(status).toBe(200);
      expect(body.components?.events?.details).toEqual({
        exchange,
        broker: 'connected',
        backlog: 0,
        oldestUnsentAgeSeconds: 0,
      });
      expect(healthMs).toBeLessThan(2000); // less than its probe's timeout: it did not wait behind the queue
    } finally {
      for (const client of taken) client.release();
    }
  });
});

describeWithBroker('the relay when the broker cannot be reached or refuses (D28)', () => {
  useBrokerExclusively();
  let db: TestDatabase;
  let exchange: string;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
    exchange = `inventory-test-faulty-${randomUUID()}`;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await deleteExchange(exchange);
    await db.drop();
  });

  function instance(url: string): EventsInstance {
    const started = startInstance(db.pool, { AMQP_URL: url, AMQP_EXCHANGE: exchange });
    cleanups.push(() => started.stop());
    return started;
  }

  async function consumer(): Promise<EventConsumer> {
    const started = await consumeExchange(exchange, { declareExchange: true });
    cleanups.push(() => started.close());
    return started;
  }

  it('keeps answering writes, reports DOWN with a growing backlog, and another relay delivers them later', async () => {
    const cut = instance(`amqp://guest:guest@127.0.0.1:${await closedPort()}`);
    const answers: number[] = [];
    const backlogs: unknown[] = [];
    const skus: string[] = [];
    for (let i = 0; i < 3; i++) {
      const product = aProduct();
      skus.push(product.sku);
      answers.push((await call(cut.app, 'post', '/v1/products').send([product])).status);
      backlogs.push((await health(cut.app)).body.components?.events?.details.backlog);
    }
    const down = await health(cut.app);

    const queue = await consumer();
    instance(BROKER_URL);
    const outbox = [...(await outboxEvents(db.pool)).keys()];
    await queue.waitFor((all) => all.length >= 3, 20_000, 'the three events');
    await waitForBacklog(cut.app, 0);

    expect(answers).toEqual([201, 201, 201]);
    expect(backlogs).toEqual([1, 2, 3]);
    expect(down.status).toBe(200);
    expect(down.body).toEqual({
      status: 'UP',
      components: {
        events: {
          status: 'DOWN',
          details: { exchange, broker: 'unreachable', backlog: 3, oldestUnsentAgeSeconds: expect.any(Number) },
        },
      },
    });
    expect(cut.messages()).toContain('event broker unreachable: events wait in the outbox until it is back');
    expect(queue.received.map((message) => message.messageId)).toEqual(outbox);
    expect(queue.received.map((message) => (message.body as Json).sku)).toEqual(skus);
    expect((await health(cut.app)).body.components?.events).toEqual({
      status: 'DOWN',
      details: { exchange, broker: 'unreachable', backlog: 0, oldestUnsentAgeSeconds: 0 },
    });
  });

  it('reports DOWN while the broker refuses the exchange, and delivers once it accepts it', async () => {
    // An exchange of that name but another type: the broker refuses the relay's declaration (406).
    const conflicting = new Connection(BROKER_URL);
    cleanups.push(() => conflicting.close());
    await conflicting.exchangeDeclare({ exchange, type: 'direct', durable: true });
    const service = instance(BROKER_URL);
    const product = aProduct();

    const created = await call(service.app, 'post', '/v1/products').send([product]);
    const refused = await waitForBroker(service.app, 'refusing');
    await conflicting.exchangeDelete({ exchange });
    const queue = await consumer();
    await queue.waitFor((all) => all.length === 1, 40_000, 'the event after the exchange was accepted');
    const accepted = await waitForBacklog(service.app, 0);

    expect(created.status).toBe(201);
    expect(refused.status).toBe('UP');
    expect(refused.components?.events).toMatchObject({
      status: 'DOWN',
      details: { exchange, broker: 'refusing', backlog: 1 },
    });
    expect(service.messages()).toEqual(
      expect.arrayContaining([
        'event broker refuses the events: they wait in the outbox',
        'event broker connected: publishing events',
      ]),
    );
    expect(queue.received.map((message) => (message.body as Json).sku)).toEqual([product.sku]);
    expect(accepted.components?.events).toMatchObject({ status: 'UP', details: { broker: 'connected' } });
  }, 60_000);
});
