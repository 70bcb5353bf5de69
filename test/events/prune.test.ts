import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { listOutboxParts } from '../../src/events/partitions.js';
import { pruneOutbox } from '../../src/events/retention.js';
import { useTestApp } from '../support/app.js';
import { BROKER_URL, describeWithBroker } from '../support/broker.js';
import { consumeExchange, deleteExchange, type EventConsumer } from '../support/event-consumer.js';
import type { FeedEvent } from '../support/events-app.js';
import { fillOldEvents } from '../support/old-events.js';
import { bearer } from '../support/tokens.js';

/**
 * D34 / issue 29: removing old events never stops numbering or publishing. The case has 2,000,000 old
 * events; this file uses PRUNE_TEST_EVENTS (default 200,000, in 20 parts) to keep the suite's time, and the
 * benchmark (bench/notes.md, "Outbox in parts") measures the 2,000,000.
 */
const OLD_EVENTS = Number(process.env.PRUNE_TEST_EVENTS ?? 200_000);
const PART_SIZE = Math.max(1000, Math.floor(OLD_EVENTS / 20));
const WRITERS = 4;
const exchange = `inventory-test-prune-${randomUUID()}`;

interface Written {
  readonly key: string;
  readonly committedAt: number;
}

describeWithBroker('pruning old events while writers run (D34)', () => {
  const ctx = useTestApp({ AMQP_URL: BROKER_URL, AMQP_EXCHANGE: exchange, EVENTS_PARTITION_SIZE: String(PART_SIZE) });
  let consumer: EventConsumer;
  afterAll(async () => {
    await consumer?.close();
    await deleteExchange(exchange);
  });

  beforeAll(async () => {
    consumer = await consumeExchange(exchange, { declareExchange: true });
  });

  async function feedStart(): Promise<number> {
    const { rows } = await ctx.db.pool.query<{ prunedThrough: number }>(
      'SELECT pruned_through AS "prunedThrough" FROM event_feed_state WHERE id = 1',
    );
    return rows[0]!.prunedThrough;
  }

  it(
    'drops the old parts while events committed meanwhile reach the feed and the broker, none lost or renumbered',
    async () => {
      const head = await fillOldEvents(ctx.db.pool, {
        count: OLD_EVENTS,
        ageHours: 24 * 30,
        partitionSize: PART_SIZE,
        exchange,
      });
      // A fresh database: the old events fill exactly the first parts.
      expect(head).toBe(0);
      const oldThrough = head + OLD_EVENTS;
      const written: Written[] = [];
      const seenAt = new Map<string, { at: number; cursor: string }>();
      let writing = true;
      let observing = true;

      const writer = async (): Promise<void> => {
        while (writing) {
          const key = `write-${randomUUID()}`;
          await withTransaction(ctx.db.pool, (tx) =>
            appendEvents(tx, [{ type: 'product.event.updated', key, resource: { key } }], key),
          );
          written.push({ key, committedAt: Date.now() });
        }
      };
      const observer = async (): Promise<void> => {
        let cursor = String(oldThrough);
        while (observing) {
          const response = await request(ctx.app)
            .get(`/v1/events?after=${cursor}&limit=1000&wait=1`)
            .set('Authorization', bearer());
          expect(response.status).toBe(200);
          const page = response.body as { events: FeedEvent[]; next: string };
          for (const event of page.events) seenAt.set(event.requestId!, { at: Date.now(), cursor: event.cursor });
          cursor = page.next;
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      const observing$ = observer();
      await new Promise((resolve) => setTimeout(resolve, 2000));

      const pruneStart = Date.now();
      const removed = await pruneOutbox(ctx.db.pool, new Date(Date.now() - 24 * 3_600_000), exchange);
      const pruneEnd = Date.now();
      const brokerAtEnd = new Set(consumer.received.map((message) => message.correlationId));
      writing = false;
      await Promise.all(writers);

      const duringPrune = written.filter((write) => write.committedAt >= pruneStart && write.committedAt <= pruneEnd);
      const seenDuringPrune = duringPrune.filter((write) => (seenAt.get(write.key)?.at ?? Infinity) <= pruneEnd);
      await consumer.waitFor(
        (all) => written.every((write) => all.some((message) => message.correlationId === write.key)),
        30_000,
        'every written event at the broker',
      );
      // The broker may be ahead of the feed's reader: it stops once it has seen every write, or at a deadline.
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        if (written.every((write) => seenAt.has(write.key))) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      observing = false;
      await observing$;
      const worstDelay = (writes: Written[]): number =>
        Math.max(
          ...writes.map((write) => (seenAt.get(write.key)?.at ?? NaN) - write.committedAt).filter(Number.isFinite),
        );
      // eslint-disable-next-line no-console -- bench/notes.md reports these figures
      console.log(
        `pruned ${removed} events in ${pruneEnd - pruneStart} ms while ${WRITERS} writers committed ${duringPrune.length}; ` +
          `${seenDuringPrune.length} of them were in the feed and ` +
          `${duringPrune.filter((write) => brokerAtEnd.has(write.key)).length} at the broker before the prune ended; ` +
          `worst commit-to-feed delay ` +
          `${worstDelay(duringPrune)} ms during the prune, ${worstDelay(written.filter((write) => !duringPrune.includes(write)))} ms outside it`,
      );

      // Every old part went, and only those: the feed starts where the old events end.
      expect(removed).toBe(OLD_EVENTS);
      expect(await feedStart()).toBe(oldThrough);
      expect((await listOutboxParts(ctx.db.pool))[0]!.from).toBe(oldThrough + 1);
      // Numbering and publishing went on during the prune.
      expect(seenDuringPrune.length).toBeGreaterThan(0);
      // None lost, none twice, none renumbered: each write is in the feed once, at the position it was first seen.
      const { rows } = await ctx.db.pool.query<{ key: string; position: string }>(
        `SELECT resource_key AS key, position::text AS position FROM event_outbox WHERE position > $1 ORDER BY position`,
        [oldThrough],
      );
      expect(rows.map((row) => row.key).sort()).toEqual(written.map((write) => write.key).sort());
      expect(rows.map((row) => [row.key, row.position])).toEqual(
        rows.map((row) => [row.key, seenAt.get(row.key)!.cursor]),
      );
      // Only the writes' messages: a relay batch read just before the old events were marked published may carry
      // some of them (at least once, D28), which says nothing about the prune.
      const writes = consumer.received.filter((message) => message.correlationId?.startsWith('write-'));
      expect(new Set(writes.map((message) => message.messageId)).size).toBe(writes.length);
      expect(writes.length).toBe(written.length);
    },
    Math.max(60_000, OLD_EVENTS / 5),
  );
});
