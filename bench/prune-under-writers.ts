import type pg from 'pg';
import { listOutboxParts } from '../src/events/partitions.js';
import { pruneOutbox } from '../src/events/retention.js';
import { fillOldEvents } from '../test/support/old-events.js';
import { watchCpu, type CpuShare } from './cpu-share.js';
import {
  benchExchange,
  consumeEvents,
  logWarnings,
  percentileOf,
  startRelayingService,
  stopEventsService,
  type BenchConsumer,
} from './events.js';
import { wallClockMs } from './load.js';
import { sampleWaits, type WaitProfile } from './pg-waits.js';
import { sampleRss } from './processes.js';
import { step } from './progress.js';
import type { BenchContext } from './results.js';
import { requestBody } from './scenario-3-bulk-create.js';
import { productFields } from './seed.js';
import { EVENTS_APPLICATION, SERVICE_APPLICATION, type RunningServer } from './service.js';

const PRUNE_WRITERS = 4;
// The 2,000,000 in 20 parts, as test/events/prune.test.ts lays them out.
const PARTS = 20;
const OLD_EVENTS_AGE_HOURS = 24 * 30;
const CUTOFF_HOURS = 24;
// The instance's own retention (the setting's maximum): its 5-minute prune then never takes the runner's part.
const INSTANCE_RETENTION_HOURS = 10 * 365 * 24;
// Writes before and after the prune: the delays outside it, to tell the prune's share from the machine's. Before it
// the old events are still kept, after it they are gone.
export const OUTSIDE_SECONDS = 3;
// After the writers stop: how long the feed and the consumer may still take to show every write.
const DELIVERY_WAIT_MS = 30_000;
const REQUEST_ID_PREFIX = 'bench-s17';
const LOG_NAME = 'service-prune-17';

/** Commit-to-feed delays of a set of writes, in ms. */
export interface FeedDelays {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly worstMs: number;
}

export interface PruneUnderWriters {
  readonly oldEvents: number;
  readonly partitionSize: number;
  readonly fillSeconds: number;
  readonly writers: number;
  readonly pruneSeconds: number;
  readonly removed: number;
  readonly partsDropped: number;
  /** The feed starts right after the old events (`pruned_through`), and the first part kept right after it. */
  readonly feedStartsAfterOldEvents: boolean;
  readonly writes: number;
  readonly failedWrites: number;
  readonly writesDuringPrune: number;
  readonly inFeedBeforePruneEnded: number;
  readonly atBrokerBeforePruneEnded: number;
  readonly feedDelays: { readonly before: FeedDelays; readonly during: FeedDelays; readonly after: FeedDelays };
  /** The instance's PostgreSQL connections during the prune: its requests' pool and its events pool. */
  readonly waitsDuringPrune: { readonly requests: WaitProfile; readonly events: WaitProfile };
  /** Writes answered 201 whose event is not in the outbox, or never showed in the feed or at the broker. */
  readonly lost: { readonly outbox: number; readonly feed: number; readonly broker: number };
  /** Events in the outbox more than once, and those whose position differs from the cursor the feed showed. */
  readonly duplicated: number;
  readonly renumbered: number;
  readonly brokerDuplicates: number;
  /** The relaying instance while the prune ran. */
  readonly instanceCpu: CpuShare | undefined;
  readonly instanceRssMb: number;
  readonly warnings: readonly string[];
}

interface Write {
  readonly requestId: string;
  /** When the 201 arrived (`wallClockMs`): the commit came before it. */
  readonly answeredAt: number;
}

/** Creates one Product a request, one event each, until `writing()` turns false. */
async function writeProducts(
  service: RunningServer,
  authorization: string,
  writing: () => boolean,
  next: () => number,
  writes: Write[],
): Promise<number> {
  let failed = 0;
  while (writing()) {
    const n = next();
    const requestId = `${REQUEST_ID_PREFIX}-${n}`;
    const response = await fetch(`${service.baseUrl}/v1/products`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', 'x-request-id': requestId },
      body: requestBody([productFields('PRUNE', n)]),
    });
    await response.arrayBuffer();
    if (response.status === 201) writes.push({ requestId, answeredAt: wallClockMs() });
    else failed++;
  }
  return failed;
}

/** Reads the JSON feed after `after` as a client does (long poll), noting when each request's event first showed. */
async function readFeed(
  service: RunningServer,
  authorization: string,
  after: number,
  reading: () => boolean,
  seen: Map<string, { at: number; cursor: string }>,
): Promise<void> {
  let cursor = String(after);
  while (reading()) {
    const response = await fetch(`${service.baseUrl}/v1/events?after=${cursor}&limit=1000&wait=1`, {
      headers: { authorization, accept: 'application/json' },
    });
    if (response.status !== 200) throw new Error(`scenario 17: the feed answered ${response.status}`);
    const page = (await response.json()) as { events: { requestId: string | null; cursor: string }[]; next: string };
    const at = wallClockMs();
    for (const event of page.events) {
      if (event.requestId && !seen.has(event.requestId)) seen.set(event.requestId, { at, cursor: event.cursor });
    }
    cursor = page.next;
  }
}

function delaysOf(writes: readonly Write[], seen: ReadonlyMap<string, { at: number }>): FeedDelays {
  const sorted = writes
    .flatMap((write) => {
      const at = seen.get(write.requestId)?.at;
      return at === undefined ? [] : [at - write.answeredAt];
    })
    .sort((a, b) => a - b);
  return { p50Ms: percentileOf(sorted, 50), p99Ms: percentileOf(sorted, 99), worstMs: sorted.at(-1) ?? Number.NaN };
}

async function outboxPositions(pool: pg.Pool, after: number): Promise<{ requestId: string; position: string }[]> {
  const { rows } = await pool.query<{ requestId: string; position: string }>(
    `SELECT request_id AS "requestId", position::text AS position
       FROM event_outbox WHERE position > $1 AND request_id LIKE $2 || '-%'`,
    [after, REQUEST_ID_PREFIX],
  );
  return rows;
}

async function feedStart(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ prunedThrough: number }>(
    'SELECT pruned_through AS "prunedThrough" FROM event_feed_state WHERE id = 1',
  );
  return rows[0]!.prunedThrough;
}

/** Distinct messages at the consumer by request id, and how many arrived more than once. */
function brokerMessages(consumer: BenchConsumer, until = Infinity): { requests: Set<string>; duplicates: number } {
  const messages = new Set<string>();
  const requests = new Set<string>();
  let duplicates = 0;
  for (const delivery of consumer.deliveries) {
    if (delivery.atMs > until || !delivery.correlationId?.startsWith(REQUEST_ID_PREFIX)) continue;
    if (messages.has(delivery.messageId ?? '')) duplicates++;
    messages.add(delivery.messageId ?? '');
    requests.add(delivery.correlationId);
  }
  return { requests, duplicates };
}

/**
 * Issue 29's proof as a measurement: `count` old published events in 20 parts, a relaying instance of the service
 * on them with a consumer bound, 4 writers creating Products through its API and a client reading its feed; then
 * src/events/retention.ts's prune, run by the runner with the cutoff a day back. Every write is checked in the
 * outbox, the feed and at the broker. `database` is fresh and migrated; no other instance writes to it.
 */
export async function pruneWhileWriting(
  ctx: BenchContext,
  database: { url: string; pool: pg.Pool },
  count: number,
): Promise<PruneUnderWriters> {
  const { pool } = database;
  const partitionSize = Math.max(1000, Math.floor(count / PARTS));
  const exchange = benchExchange(ctx.config.amqpUrl);
  step(`scenario 17: filling the outbox with ${count.toLocaleString('en-US')} old events in parts of ${partitionSize}`);
  const fillStarted = performance.now();
  const head = await fillOldEvents(pool, { count, ageHours: OLD_EVENTS_AGE_HOURS, partitionSize, exchange });
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const oldThrough = head + count;
  const partsBefore = await listOutboxParts(pool);
  const { service } = await startRelayingService(ctx, LOG_NAME, {
    database,
    env: { EVENTS_PARTITION_SIZE: String(partitionSize), EVENTS_RETENTION_HOURS: String(INSTANCE_RETENTION_HOURS) },
  });
  let consumer: BenchConsumer | undefined;
  try {
    consumer = await consumeEvents(ctx.config.amqpUrl, exchange, 'product.event.created');
    const writes: Write[] = [];
    const seen = new Map<string, { at: number; cursor: string }>();
    let writing = true;
    let reading = true;
    let written = 0;
    // The first failure of a writer or the reader stops them all; it is thrown once the prune is done.
    let failure: unknown;
    const fail = (error: unknown): number => {
      failure ??= error;
      writing = false;
      reading = false;
      return 0;
    };
    const writers = Array.from({ length: PRUNE_WRITERS }, () =>
      writeProducts(
        service,
        ctx.authorization,
        () => writing,
        () => ++written,
        writes,
      ).catch(fail),
    );
    const feed = readFeed(service, ctx.authorization, oldThrough, () => reading, seen).catch(fail);
    await new Promise((resolve) => setTimeout(resolve, OUTSIDE_SECONDS * 1000));

    step(`scenario 17: pruning while ${PRUNE_WRITERS} writers run`);
    const rss = sampleRss(service.process.pid, 100);
    const cpu = watchCpu(service.process.pid);
    const requestWaits = sampleWaits(pool, SERVICE_APPLICATION);
    const eventWaits = sampleWaits(pool, EVENTS_APPLICATION);
    const pruneStart = wallClockMs();
    const removed = await pruneOutbox(pool, new Date(Date.now() - CUTOFF_HOURS * 3_600_000), exchange);
    const pruneEnd = wallClockMs();
    const instanceCpu = cpu.stop();
    const instanceRssMb = rss.stop();
    const waitsDuringPrune = { requests: await requestWaits.stop(), events: await eventWaits.stop() };
    await new Promise((resolve) => setTimeout(resolve, OUTSIDE_SECONDS * 1000));
    writing = false;
    const failedWrites = (await Promise.all(writers)).reduce((sum, failed) => sum + failed, 0);
    const delivered = consumer;
    await delivered.waitUntil(
      () =>
        writes.every((write) => seen.has(write.requestId)) && brokerMessages(delivered).requests.size >= writes.length,
      DELIVERY_WAIT_MS,
    );
    reading = false;
    await feed;
    if (failure) throw failure;

    const during = writes.filter((write) => write.answeredAt >= pruneStart && write.answeredAt <= pruneEnd);
    const atBrokerByEnd = brokerMessages(consumer, pruneEnd).requests;
    const atBroker = brokerMessages(consumer);
    const stored = await outboxPositions(pool, oldThrough);
    const storedIds = new Set(stored.map((row) => row.requestId));
    const partsAfter = await listOutboxParts(pool);
    return {
      oldEvents: count,
      partitionSize,
      fillSeconds,
      writers: PRUNE_WRITERS,
      pruneSeconds: (pruneEnd - pruneStart) / 1000,
      removed,
      partsDropped: partsBefore.filter((part) => !partsAfter.some((kept) => kept.name === part.name)).length,
      feedStartsAfterOldEvents: (await feedStart(pool)) === oldThrough && partsAfter[0]?.from === oldThrough + 1,
      writes: writes.length,
      failedWrites,
      writesDuringPrune: during.length,
      inFeedBeforePruneEnded: during.filter((write) => (seen.get(write.requestId)?.at ?? Infinity) <= pruneEnd).length,
      atBrokerBeforePruneEnded: during.filter((write) => atBrokerByEnd.has(write.requestId)).length,
      feedDelays: {
        before: delaysOf(
          writes.filter((write) => write.answeredAt < pruneStart),
          seen,
        ),
        during: delaysOf(during, seen),
        after: delaysOf(
          writes.filter((write) => write.answeredAt > pruneEnd),
          seen,
        ),
      },
      waitsDuringPrune,
      lost: {
        outbox: writes.filter((write) => !storedIds.has(write.requestId)).length,
        feed: writes.filter((write) => !seen.has(write.requestId)).length,
        broker: writes.filter((write) => !atBroker.requests.has(write.requestId)).length,
      },
      duplicated: stored.length - storedIds.size,
      renumbered: stored.filter((row) => seen.has(row.requestId) && seen.get(row.requestId)!.cursor !== row.position)
        .length,
      brokerDuplicates: atBroker.duplicates,
      instanceCpu,
      instanceRssMb,
      warnings: await logWarnings(LOG_NAME),
    };
  } finally {
    await consumer?.close();
    await stopEventsService(service);
  }
}
