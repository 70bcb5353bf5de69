import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Express } from 'express';
import type pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { FeedListener } from '../../src/events/listener.js';
import { FeedSignal } from '../../src/events/feed-signal.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig } from '../support/app.js';
import { BROKER_URL, brokerAvailable, useBrokerExclusively } from '../support/broker.js';
import { aProduct } from '../support/builders.js';
import { consumeExchange, deleteExchange, type EventConsumer } from '../support/event-consumer.js';
import {
  missingReplicaTools,
  startReplicatedClusters,
  type ReplicatedClusters,
} from '../support/replicated-clusters.js';
import { describeWith, type RequiredPart } from '../support/required-suite.js';
import { toleratePoolTeardown } from '../support/stock-api.js';
import { startTcpRoundRobin, type TcpRoundRobin } from '../support/tcp-round-robin.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 37 (D41): a primary with a synchronous streaming replica, two instances of the service reaching it through
 * an address the test controls (a TCP forwarder, as PgBouncer or a virtual IP would be), both publishing to
 * RabbitMQ. The primary is killed under 8 writers; the address stays dead for a while, as until a failover manager
 * acts; then the replica is promoted and the address moved. The service follows without a restart: writes,
 * numbering, the relay and the other instances' LISTEN resume by themselves.
 */
const WRITERS = 8;
// Long enough for the retries of the relay and of the listener to back off as far as they go in a real failover;
// FAILOVER_OUTAGE_MS=0 measures the service's own part alone (RELIABILITY.md).
const OUTAGE_MS = Number(process.env.FAILOVER_OUTAGE_MS ?? 8_000);
const exchange = `inventory-test-failover-${randomUUID()}`;

const replicaMissing = missingReplicaTools();
const part: RequiredPart = replicaMissing
  ? { kind: 'READ-REPLICA', requireVariable: 'REQUIRE_REPLICA', missing: replicaMissing }
  : {
      kind: 'BROKER',
      requireVariable: 'REQUIRE_BROKER',
      missing: brokerAvailable ? undefined : 'no RabbitMQ answers at 127.0.0.1:5672',
    };

interface Instance {
  readonly database: Database;
  readonly events: EventsRuntime;
  readonly app: Express;
}

const logger = pino({ level: 'silent' });

/** An instance as main.ts assembles one, with pools of its own. */
async function openInstance(config: Config, migrated: boolean): Promise<Instance> {
  const database = await openDatabase(config, logger);
  toleratePoolTeardown(database.pool);
  if (!migrated) await migrate(database.pool, logger);
  const events = startEvents(database.pool, config, logger, database.sessionPool);
  return { database, events, app: createApp({ config, pool: database.pool, logger, events }) };
}

interface Write {
  readonly sku: string;
  readonly startedAt: number;
  readonly acknowledgedAt: number;
}

/** The first instant of `times` at or after `since`, as milliseconds after `since`. */
function firstAfter(since: number, times: readonly number[]): number | undefined {
  const after = times.filter((time) => time >= since);
  return after.length === 0 ? undefined : Math.min(...after) - since;
}

describeWith(part, 'failover to a promoted synchronous replica (D41)', () => {
  useBrokerExclusively();
  let clusters: ReplicatedClusters;
  let address: TcpRoundRobin;
  let consumer: EventConsumer;
  let first: Instance;
  let second: Instance;
  // The LISTEN path alone, on the second instance's settings: its head moves only by notifications.
  const heard = new FeedSignal();
  let listener: FeedListener;

  beforeAll(async () => {
    clusters = await startReplicatedClusters();
    await clusters.onPrimary("ALTER SYSTEM SET synchronous_standby_names = '*'");
    await clusters.onPrimary('SELECT pg_reload_conf()');
    address = await startTcpRoundRobin([Number(new URL(clusters.primaryUrl).port)]);
    consumer = await consumeExchange(exchange, { declareExchange: true });
    const config = testConfig({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${address.port}/postgres`,
      DB_CONNECT_TIMEOUT_MS: '1000',
      AMQP_URL: BROKER_URL,
      AMQP_EXCHANGE: exchange,
    });
    first = await openInstance(config, false);
    second = await openInstance(config, true);
    listener = new FeedListener(second.database.sessionPool.options as pg.ClientConfig, heard, logger);
  }, 60_000);

  afterAll(async () => {
    await listener?.stop();
    for (const instance of [first, second]) {
      await instance?.events.stop();
      await instance?.database.close();
    }
    await consumer?.close();
    await deleteExchange(exchange);
    await address?.close();
    await clusters?.destroy();
  }, 60_000);

  it('follows the promoted replica: 503 with Retry-After meanwhile, no acknowledged write lost, its events numbered, published and heard', async () => {
    const [sync] = await clusters.onPrimary<{ state: string }>('SELECT sync_state AS state FROM pg_stat_replication');
    expect(sync?.state).toBe('sync');
    const heardAt: { head: number; at: number }[] = [];
    heard.onAdvance((head) => heardAt.push({ head, at: Date.now() }));
    const secondHeadAt: { head: number; at: number }[] = [];
    second.events.signal.onAdvance((head) => secondHeadAt.push({ head, at: Date.now() }));

    const acknowledged: Write[] = [];
    const refusals: { status: number; retryAfter?: string }[] = [];
    let running = true;
    const writer = async (): Promise<void> => {
      while (running) {
        const product = aProduct();
        const startedAt = Date.now();
        const response = await request(first.app).post('/v1/products').set('Authorization', bearer()).send(product);
        if (response.status === 201) acknowledged.push({ sku: product.sku, startedAt, acknowledgedAt: Date.now() });
        else {
          refusals.push({ status: response.status, retryAfter: response.headers['retry-after'] });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, writer);
    for (const deadline = Date.now() + 20_000; acknowledged.length < 40;) {
      if (Date.now() > deadline)
        throw new Error(`only ${acknowledged.length} writes before the kill: ${JSON.stringify(refusals.slice(0, 3))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const beforeKill = acknowledged.length;

    const pid = Number((await readFile(path.join(clusters.primaryDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const readinessWhileDown = (await request(first.app).get('/actuator/health/readiness')).status;
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await clusters.onReplica('SELECT pg_promote(true, 30)');
    // Everything numbered on the old primary is here (synchronous); a higher position was numbered on the new one.
    const [numbered] = await clusters.onReplica<{ head: string }>(
      'SELECT coalesce(max(position), 0)::text AS head FROM event_outbox',
    );
    const oldHead = Number(numbered!.head);
    const movedAt = Date.now();
    address.moveTo(Number(new URL(clusters.replicaUrl).port));

    const writtenAfterKill = (): Write[] => acknowledged.filter((write) => write.startedAt > killedAt);
    const publishedAt = (skus: ReadonlySet<string>): number[] =>
      consumer.received.flatMap((message, index) =>
        skus.has((message.body as { sku?: string }).sku ?? '') ? [consumer.arrivedAt[index]!] : [],
      );
    const resumed = (): boolean =>
      writtenAfterKill().length > 0 &&
      publishedAt(new Set(writtenAfterKill().map((write) => write.sku))).length > 0 &&
      heard.head > oldHead &&
      second.events.signal.head > oldHead;
    for (const deadline = Date.now() + 30_000; !resumed();) {
      if (Date.now() > deadline) {
        const state = { written: writtenAfterKill().length, heard: heard.head, second: second.events.signal.head };
        throw new Error(`not everything resumed 30 s after the move (old head ${oldHead}): ${JSON.stringify(state)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    running = false;
    await Promise.all(writers);

    expect(beforeKill).toBeGreaterThan(0);
    expect(readinessWhileDown).toBe(503);
    expect((await request(first.app).get('/actuator/health/readiness')).status).toBe(200);
    expect(refusals.filter((refusal) => refusal.status !== 503 || refusal.retryAfter === undefined)).toEqual([]);

    const skus = acknowledged.map((write) => write.sku);
    const stored = await clusters.onReplica<{ sku: string }>('SELECT sku FROM product WHERE sku = ANY($1)', [skus]);
    expect(stored.length).toBe(acknowledged.length);

    // Numbering resumes by itself. (Not a count of the default part: an event numbered before the first part could
    // be created stays there, numbered.)
    for (const deadline = Date.now() + 15_000; ;) {
      const [left] = await clusters.onReplica<{ n: number }>(
        'SELECT count(*)::int AS n FROM event_outbox WHERE position IS NULL',
      );
      if (left!.n === 0) break;
      if (Date.now() > deadline) throw new Error(`${left!.n} events left unnumbered after the failover`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    // The relay resumes by itself: every acknowledged write's event reaches the broker, at least once (D28).
    const created = (): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const message of consumer.received) {
        const sku = (message.body as { sku?: string }).sku;
        if (message.routingKey === 'product.event.created' && sku) counts.set(sku, (counts.get(sku) ?? 0) + 1);
      }
      return counts;
    };
    await consumer.waitFor(
      () => skus.every((sku) => created().has(sku)),
      20_000,
      `the events of all ${skus.length} acknowledged writes`,
    );
    const repeated = [...created().values()].filter((count) => count > 1).length;

    const afterKill = writtenAfterKill();
    const firstWrite = firstAfter(
      killedAt,
      afterKill.map((write) => write.acknowledgedAt),
    )!;
    const firstPublished = firstAfter(killedAt, publishedAt(new Set(afterKill.map((write) => write.sku))))!;
    const heardNewPrimary = heardAt.find(({ head }) => head > oldHead)!.at - movedAt;
    const secondFollowed = secondHeadAt.find(({ head }) => head > oldHead)!.at - movedAt;
    const moved = movedAt - killedAt;
    process.stdout.write(
      `failover: address moved ${moved} ms after the kill; first successful write ${firstWrite} ms after the kill ` +
        `(${firstWrite - moved} after the move); first event of a write begun after the kill at the broker ` +
        `${firstPublished} ms after the kill (${firstPublished - moved} after the move); the other instance's ` +
        `LISTEN heard the new primary ${heardNewPrimary} ms after the move, its head moved ${secondFollowed} ms ` +
        `after; ${acknowledged.length} writes acknowledged (${beforeKill} before the kill), ${refusals.length} ` +
        `answered 503; ${repeated} of ${skus.length} events published more than once\n`,
    );
  }, 120_000);
});
