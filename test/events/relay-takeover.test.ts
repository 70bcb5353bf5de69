import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { BROKER_URL, describeWithBroker } from '../support/broker.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { consumeExchange, deleteExchange, type EventConsumer } from '../support/event-consumer.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';

/**
 * Issue 29: after `kill -9` of the instance that publishes, another of the three takes over once its lease runs out
 * (at most 3 s after its last renewal, src/events/relay.ts), and no event is lost. The takeover time is printed
 * (bench/notes.md: 2.9 s at load 25); what is asserted is the lease that bounds it, not the machine's speed.
 */
const INSTANCES = 3;
const WRITERS = 4;
const exchange = `inventory-test-takeover-${randomUUID()}`;

interface RelayState {
  owner: string | null;
  publishedThrough: number;
}

describeWithBroker('the relay after the publishing instance is killed (D28)', () => {
  let db: TestDatabase;
  let services: ServiceProcess[] = [];
  let consumer: EventConsumer;

  beforeAll(async () => {
    db = await createTestDatabase();
    consumer = await consumeExchange(exchange, { declareExchange: true });
    services = await startServicesOnDatabase(db.url, INSTANCES, { AMQP_URL: BROKER_URL, AMQP_EXCHANGE: exchange });
  }, 180_000);

  afterAll(async () => {
    await stopServices(services);
    await consumer?.close();
    await deleteExchange(exchange);
    await db?.drop();
  }, 60_000);

  async function relayState(): Promise<RelayState | undefined> {
    const { rows } = await db.pool.query<RelayState>(
      `SELECT owner, published_through AS "publishedThrough" FROM event_relay_state WHERE exchange = $1`,
      [exchange],
    );
    return rows[0];
  }

  async function until<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
    for (const deadline = Date.now() + ms; ;) {
      const found = await probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('hands publishing to another instance once the lease of one killed by kill -9 under load runs out, losing no event', async () => {
    const written: string[] = [];
    let writing = true;
    const writer = async (): Promise<void> => {
      while (writing) {
        const key = `takeover-${randomUUID()}`;
        await withTransaction(db.pool, (tx) =>
          appendEvents(tx, [{ type: 'product.event.updated', key, resource: { key } }], key),
        );
        written.push(key);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const writers = Array.from({ length: WRITERS }, writer);
    const leader = await until(
      async () => {
        const state = await relayState();
        return state?.owner && state.publishedThrough > 0 ? state : undefined;
      },
      20_000,
      'no instance published',
    );
    const victim = services.find((service) => leader.owner!.includes(`:${service.child.pid}:`))!;
    expect(victim).toBeDefined();

    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    const { rows } = await db.pool.query<{ leaseLeftMs: number }>(
      `SELECT extract(epoch FROM lease_until - clock_timestamp()) * 1000 AS "leaseLeftMs"
         FROM event_relay_state WHERE exchange = $1`,
      [exchange],
    );
    await victim.exited;
    const successor = await until(
      async () => {
        const state = await relayState();
        return state && state.owner !== leader.owner ? state : undefined;
      },
      30_000,
      'no instance took over',
    );
    const takeoverMs = Date.now() - killedAt;
    await until(
      async () => ((await relayState())!.publishedThrough > successor.publishedThrough ? true : undefined),
      30_000,
      'the successor published nothing',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    writing = false;
    await Promise.all(writers);
    await consumer.waitFor(
      (all) => {
        const arrived = new Set(all.map((message) => message.correlationId));
        return written.every((key) => arrived.has(key));
      },
      60_000,
      'every written event at the broker',
    );
    // eslint-disable-next-line no-console -- bench/notes.md reports this figure
    console.log(`relay taken over ${takeoverMs} ms after kill -9; ${written.length} events written, none lost`);

    expect(Number(rows[0]!.leaseLeftMs)).toBeLessThanOrEqual(3000);
    expect(services.filter((service) => service !== victim).map((service) => service.child.exitCode)).toEqual([
      null,
      null,
    ]);
  }, 180_000);
});
