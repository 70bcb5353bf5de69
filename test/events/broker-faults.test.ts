import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  BROKER_URL,
  describeWithBroker,
  ensureBrokerRunning,
  rabbitmqctl,
  stopBroker,
  useBrokerExclusively,
} from '../support/broker.js';
import { aProduct } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { consumeExchange, deleteExchange, type EventConsumer, type Received } from '../support/event-consumer.js';
import {
  health,
  metricValue,
  outboxEvents,
  startInstance,
  waitForBacklog,
  type EventsInstance,
} from '../support/events-app.js';
import { call } from '../support/stock-api.js';

/**
 * D28's delivery guarantee under broker faults: at least once (duplicates only as the same message), nothing
 * of an acknowledged write lost, each resource's events in commit order, and one publisher among instances.
 * Each test has its own database, exchange and durable queue (which keeps its messages over a broker restart).
 */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Write {
  readonly requestId: string;
  readonly status: number;
}

/**
 * A writer as a client of the service: creates a Product, updates it three times (so each resource has a
 * sequence of events whose order can be checked), and again, until `until`; answers every request it made.
 */
async function writeUntil(apps: readonly Express[], until: number): Promise<Write[]> {
  const writes: Write[] = [];
  let turn = 0;
  const send = async (
    method: 'post' | 'put',
    path: string,
    body: unknown,
  ): Promise<{ status: number; location?: string }> => {
    const requestId = `write-${randomUUID()}`;
    const app = apps[turn++ % apps.length]!;
    const response = await call(app, method, path)
      .set('X-Request-Id', requestId)
      .send(body as object);
    writes.push({ requestId, status: response.status });
    return { status: response.status, location: response.headers.location };
  };
  while (Date.now() < until) {
    const product = aProduct();
    const created = await send('post', '/v1/products', [product]);
    const pKey = created.location?.split('/').pop();
    if (created.status !== 201 || !pKey) continue;
    for (let ol = 0; ol < 3 && Date.now() < until; ol++) {
      await send('put', '/v1/products', { ...product, pKey, ol, description: `version ${ol + 1}` });
    }
  }
  return writes;
}

async function writers(apps: readonly Express[], count: number, ms: number): Promise<Write[]> {
  const until = Date.now() + ms;
  return (await Promise.all(Array.from({ length: count }, () => writeUntil(apps, until)))).flat();
}

interface Delivery {
  readonly events: number;
  readonly messages: number;
  readonly redelivered: number;
  readonly republished: number;
}

function sameMessage(message: Received): unknown {
  return [message.routingKey, message.correlationId, message.ownsEventType, message.body];
}

/**
 * Waits until the queue has every event of the outbox, then checks D28's guarantee against the acknowledged
 * writes; answers the counts.
 */
async function expectEveryEventDelivered(
  pool: pg.Pool,
  consumer: EventConsumer,
  writes: readonly Write[],
): Promise<Delivery> {
  const outbox = await outboxEvents(pool);
  await consumer.waitFor(
    (received) => {
      const ids = new Set(received.map((message) => message.messageId));
      return [...outbox.keys()].every((id) => ids.has(id));
    },
    45_000,
    `all ${outbox.size} events of the outbox`,
  );
  const numbered = await outboxEvents(pool);
  const received = [...consumer.received];

  // Writes go on whatever the broker does, and each acknowledged write has its one event, no other has any.
  expect(writes.filter((write) => write.status !== 200 && write.status !== 201)).toEqual([]);
  const eventRequests = [...numbered.values()].map((event) => event.requestId).sort();
  expect(eventRequests).toEqual(writes.map((write) => write.requestId).sort());

  // Every message is an event of the outbox; a message that arrives twice is the same message.
  const firstOf = new Map<string, Received>();
  for (const message of received) {
    expect(numbered.has(message.messageId!)).toBe(true);
    const first = firstOf.get(message.messageId!);
    if (first) expect(sameMessage(message)).toEqual(sameMessage(first));
    else firstOf.set(message.messageId!, message);
  }
  expect(firstOf.size).toBe(numbered.size);

  // Each resource's events arrive in commit (position) order, ignoring repeated deliveries.
  const positionsByResource = new Map<string, number[]>();
  for (const messageId of firstOf.keys()) {
    const event = numbered.get(messageId)!;
    positionsByResource.set(event.resourceKey, [
      ...(positionsByResource.get(event.resourceKey) ?? []),
      event.position!,
    ]);
  }
  const outOfOrder = [...positionsByResource].filter(([, positions]) =>
    positions.some((position, i) => i > 0 && position < positions[i - 1]!),
  );
  expect(outOfOrder).toEqual([]);
  expect(Math.max(...[...positionsByResource.values()].map((positions) => positions.length))).toBe(4);

  return {
    events: numbered.size,
    messages: received.length,
    redelivered: received.filter((message) => message.redelivered).length,
    republished: received.filter((message) => !message.redelivered).length - numbered.size,
  };
}

function report(what: string, writes: readonly Write[], delivery: Delivery, ms: number): void {
  process.stderr.write(
    `[broker faults] ${what}: ${writes.length} acknowledged writes, ${delivery.events} events, ` +
      `${delivery.messages} messages (${delivery.republished} published again, ${delivery.redelivered} redelivered ` +
      `by the broker), all delivered ${ms} ms after the writes ended\n`,
  );
}

/** The relay's broker log lines, in order. */
function brokerLines(instance: EventsInstance): string[] {
  return instance.messages().filter((message) => message.startsWith('event broker'));
}

const CONNECTED = 'event broker connected: publishing events';
const UNREACHABLE = 'event broker unreachable: events wait in the outbox until it is back';

describeWithBroker('events under broker faults (D28)', () => {
  useBrokerExclusively();
  let db: TestDatabase;
  let exchange: string;
  let consumer: EventConsumer;
  const instances: EventsInstance[] = [];
  const pools: pg.Pool[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
    exchange = `inventory-test-faults-${randomUUID()}`;
    consumer = await consumeExchange(exchange, { durable: true, declareExchange: true });
  });
  afterEach(async () => {
    await ensureBrokerRunning();
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
    await consumer?.close();
    await deleteExchange(exchange);
    await db?.drop();
  }, 120_000);

  function instance(pool: pg.Pool = db.pool): EventsInstance {
    const started = startInstance(pool, { AMQP_URL: BROKER_URL, AMQP_EXCHANGE: exchange });
    instances.push(started);
    return started;
  }

  it('delivers every event of every acknowledged write when the broker restarts during writes', async () => {
    const service = instance();
    await waitForBacklog(service.app, 0);

    const writing = writers([service.app], 4, 20_000);
    await sleep(3000);
    await stopBroker();
    await sleep(3000);
    const down = (await health(service.app)).body;
    await sleep(2000);
    await ensureBrokerRunning();
    const writes = await writing;
    const ended = Date.now();
    const delivery = await expectEveryEventDelivered(db.pool, consumer, writes);
    report('broker restarted (stop_app, 5 s, start_app)', writes, delivery, Date.now() - ended);

    // The outage was real: events waited in the outbox while requests went on.
    expect(down.status).toBe('UP');
    expect(down.components?.events?.status).toBe('DOWN');
    expect(down.components?.events?.details.backlog).toBeGreaterThan(0);
    expect(brokerLines(service)).toEqual([CONNECTED, UNREACHABLE, CONNECTED]);
    expect((await waitForBacklog(service.app, 0)).components?.events?.status).toBe('UP');
  }, 100_000);

  it('delivers every event of every acknowledged write when the broker closes its connections', async () => {
    const service = instance();
    await waitForBacklog(service.app, 0);

    const writing = writers([service.app], 4, 15_000);
    await sleep(3000);
    await rabbitmqctl('close_all_connections', 'test: connections killed');
    await sleep(5000);
    await rabbitmqctl('close_all_connections', 'test: connections killed again');
    const writes = await writing;
    const ended = Date.now();
    const delivery = await expectEveryEventDelivered(db.pool, consumer, writes);
    report('connections closed twice', writes, delivery, Date.now() - ended);

    expect(brokerLines(service)).toEqual([CONNECTED, UNREACHABLE, CONNECTED, UNREACHABLE, CONNECTED]);
    expect((await waitForBacklog(service.app, 0)).components?.events?.status).toBe('UP');
  }, 100_000);

  it('publishes each event once when three instances relay the same outbox', async () => {
    for (let i = 0; i < 3; i++) pools.push(new pg.Pool({ connectionString: db.url, max: 5 }));
    const services = pools.map((pool) => instance(pool));
    await Promise.all(services.map((service) => waitForBacklog(service.app, 0)));

    const writes = await writers(
      services.map((service) => service.app),
      4,
      10_000,
    );
    const ended = Date.now();
    const delivery = await expectEveryEventDelivered(db.pool, consumer, writes);
    report('three instances relaying', writes, delivery, Date.now() - ended);
    const published = await Promise.all(
      services.map((service) => metricValue(service.app, 'inventory_events_published_total')),
    );

    expect(delivery.messages).toBe(delivery.events);
    expect(published.reduce((sum, count) => sum! + count!, 0)).toBe(delivery.events);
  }, 100_000);
});
