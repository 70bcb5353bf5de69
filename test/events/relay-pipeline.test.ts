import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Connection } from 'rabbitmq-client';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { FeedSignal } from '../../src/events/feed-signal.js';
import { EventRelay } from '../../src/events/relay.js';
import { BROKER_URL, describeWithBroker } from '../support/broker.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deleteExchange } from '../support/event-consumer.js';
import { fillOldEvents } from '../support/old-events.js';

/**
 * The relay's pipelined backlog (src/events/relay.ts, publishBacklog): several batches await the broker's confirms
 * at once while the published mark moves batch by batch. What it does when it loses the lease or is stopped midway.
 */
const BACKLOG = 30_000;

interface RelayState {
  owner: string | null;
  publishedThrough: number;
  leased: boolean;
}

describeWithBroker('the relay in the middle of a long backlog (D28)', () => {
  let db: TestDatabase;
  let exchange: string;
  let relay: EventRelay | undefined;

  beforeEach(async () => {
    // As the service reads positions: numbers, not strings.
    registerTypeParsers();
    db = await createTestDatabase();
    exchange = `inventory-test-pipeline-${randomUUID()}`;
    await fillOldEvents(db.pool, { count: BACKLOG, ageHours: 0, partitionSize: 10_000 });
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await deleteExchange(exchange);
    await db.drop();
  });

  function startRelay(): EventRelay {
    relay = new EventRelay(db.pool, { url: BROKER_URL, exchange }, new FeedSignal(), pino({ level: 'silent' }), () => {
      // counted by the metrics elsewhere
    });
    return relay;
  }

  async function relayState(): Promise<RelayState | undefined> {
    const { rows } = await db.pool.query<RelayState>(
      `SELECT owner, published_through::int AS "publishedThrough", COALESCE(lease_until > clock_timestamp(), false) AS leased
         FROM event_relay_state WHERE exchange = $1`,
      [exchange],
    );
    return rows[0];
  }

  async function untilPublishing(): Promise<RelayState> {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      const state = await relayState();
      if (state && state.publishedThrough > 0) return state;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('the relay published nothing within 20 s');
  }

  it('stops soon when stopped midway, past the batches in flight only, and hands the lease back', async () => {
    const { owner } = startRelay();
    await untilPublishing();

    const started = performance.now();
    await relay!.stop();
    const stopMs = performance.now() - started;
    const state = await relayState();
    relay = undefined;

    // Draining three batches takes well under the relay's idle wait (1 s), which a stop must not sit out.
    expect(stopMs).toBeLessThan(900);
    expect(state!.owner).toBe(owner);
    expect(state!.leased).toBe(false);
    expect(state!.publishedThrough).toBeLessThan(BACKLOG);
  });

  it('moves the mark only past what the broker took when it refuses batches midway, and sends on from there', async () => {
    // A queue that refuses what it cannot hold: the broker nacks publishes beyond LIMIT while nobody consumes.
    const LIMIT = 5000;
    const queue = `inventory-test-full-${randomUUID()}`;
    const admin = new Connection({ url: BROKER_URL, retryLow: 200 });
    admin.on('error', () => undefined);
    try {
      await admin.exchangeDeclare({ exchange, type: 'topic', durable: true });
      const queueOptions = {
        exclusive: true,
        arguments: { 'x-max-length': LIMIT, 'x-overflow': 'reject-publish' as const },
      };
      await admin.queueDeclare({ queue, ...queueOptions });
      await admin.queueBind({ queue, exchange, routingKey: '#' });
      startRelay();
      for (let queued = 0; queued < LIMIT;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        queued = (await admin.queueDeclare({ queue, passive: true })).messageCount;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const refused = await relayState();

      const received: string[] = [];
      const consumer = admin.createConsumer({ queue, queueOptions, qos: { prefetchCount: 2000 } }, (message) => {
        received.push(message.messageId!);
      });
      try {
        const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM event_outbox ORDER BY position');
        for (const deadline = Date.now() + 60_000; new Set(received).size < BACKLOG;) {
          if (Date.now() > deadline) throw new Error(`${new Set(received).size} of ${BACKLOG} events arrived`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }

        expect(refused!.publishedThrough).toBeLessThanOrEqual(LIMIT);
        // The first LIMIT in order, the rest each at least once from the mark on, none skipped.
        expect(received.slice(0, LIMIT)).toEqual(rows.slice(0, LIMIT).map((row) => row.id));
        expect(new Set(received)).toEqual(new Set(rows.map((row) => row.id)));
        for (const deadline = Date.now() + 5000; (await relayState())!.publishedThrough < BACKLOG;) {
          if (Date.now() > deadline) throw new Error('the mark did not reach the end of the backlog');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await consumer.close();
      }
    } finally {
      await admin.close();
    }
  }, 90_000);

  it('moves the mark no further once another instance has taken the lease over midway', async () => {
    startRelay();
    await untilPublishing();

    await db.pool.query(
      `UPDATE event_relay_state SET owner = 'another', lease_until = clock_timestamp() + interval '1 hour'
        WHERE exchange = $1`,
      [exchange],
    );
    const taken = await relayState();
    await new Promise((resolve) => setTimeout(resolve, 1500));

    expect(await relayState()).toEqual(taken);
    await relay!.stop();
    relay = undefined;
    // The lease is not this instance's to hand back.
    expect(await relayState()).toEqual(taken);
  });
});
