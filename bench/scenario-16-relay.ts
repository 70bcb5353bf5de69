import type pg from 'pg';
import { watchCommandCpu, watchCpu, type CpuShare } from './cpu-share.js';
import {
  benchExchange,
  consumeEvents,
  logWarnings,
  percentileOf,
  startRelayingService,
  stopEventsService,
  withBroker,
  type BenchConsumer,
  type Delivery,
} from './events.js';
import { timedRequest } from './http.js';
import { wallClockMs } from './load.js';
import { sampleRss } from './processes.js';
import { startProgress, step } from './progress.js';
import { formatNumber, type BenchContext, type ScenarioResult } from './results.js';
import { requestBody, rows } from './scenario-3-bulk-create.js';
import type { RunningServer } from './service.js';

const LOG_NAME = 'service-events-16';
const CATCH_UP_LOG_NAME = 'service-events-16-catch-up';
const EVENT_TYPE = 'product.event.created';
/** Issue 29: one instance publishes at least this many events a second, sustained. */
const MIN_EVENTS_PER_SECOND = 10_000;
// Writers and their bulk size: enough concurrent writes to offer the relay more than the target on this machine.
const WRITERS = 8;
const PRODUCTS_PER_WRITE = 250;
// The catch-up run: writes with no relay for this long, then a relay publishes their backlog; it has caught up once
// fewer than this many numbered events wait.
const HEAD_START_SECONDS = 20;
const CAUGHT_UP_BELOW = 1_000;
// After the writes, how long the last events may take to arrive before the run is called incomplete.
const DRAIN_GIVE_UP_MS = 120_000;

/** The outbox's backlog in its two stages: events committed but not numbered, and numbered but not published. */
async function backlogParts(pool: pg.Pool, exchange: string): Promise<{ unnumbered: number; unpublished: number }> {
  const { rows: found } = await pool.query<{ unnumbered: number; unpublished: number }>(
    `SELECT (SELECT count(*) FROM event_outbox WHERE position IS NULL)::int AS unnumbered,
            ((SELECT sequenced_through FROM event_feed_state WHERE id = 1)
             - (SELECT published_through FROM event_relay_state WHERE exchange = $1))::int AS unpublished`,
    [exchange],
  );
  return found[0]!;
}

interface WriteLoad {
  /** When each request's 201 arrived (`wallClockMs`), by its X-Request-Id. */
  readonly answeredAt: Map<string, number>;
  readonly failures: number;
  readonly startedAt: number;
  readonly endedAt: number;
}

/**
 * WRITERS loops of bulk POSTs of PRODUCTS_PER_WRITE new Products each, to the run's service, for `seconds`;
 * `run` names the requests and SKUs apart from other runs'.
 */
async function writeFor(ctx: BenchContext, run: string, seconds: number): Promise<WriteLoad> {
  const answeredAt = new Map<string, number>();
  let failures = 0;
  const startedAt = wallClockMs();
  const endsAt = startedAt + seconds * 1000;
  const writer = async (index: number): Promise<void> => {
    for (let request = 0; wallClockMs() < endsAt; request++) {
      const requestId = `bench-s16-${run}-${index}-${request}`;
      const body = requestBody(rows(`R16${run}W${index}N${request}`, PRODUCTS_PER_WRITE));
      const answer = await timedRequest(`${ctx.service.baseUrl}/v1/products`, {
        method: 'POST',
        headers: { authorization: ctx.authorization, 'x-request-id': requestId },
        body,
      });
      if (answer.status === 201) answeredAt.set(requestId, wallClockMs());
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));
  return { answeredAt, failures, startedAt, endedAt: wallClockMs() };
}

/** Each of the writes' events once (by message id), with its lag from its request's 201 to the consumer. */
function arrivals(deliveries: readonly Delivery[], writes: WriteLoad): { atMs: number; lagMs: number }[] {
  const seen = new Set<string>();
  const found: { atMs: number; lagMs: number }[] = [];
  for (const delivery of deliveries) {
    const answered = writes.answeredAt.get(delivery.correlationId ?? '');
    if (answered === undefined || delivery.messageId === undefined || seen.has(delivery.messageId)) continue;
    seen.add(delivery.messageId);
    // An event can reach the consumer before its request's 201 reaches the writer: that lag counts as 0.
    found.push({ atMs: delivery.atMs, lagMs: Math.max(0, delivery.atMs - answered) });
  }
  return found;
}

interface BacklogSeen {
  readonly worst: { unnumbered: number; unpublished: number };
  /** The mean of the samples: by Little's law, divided by the event rate, the time an event waits in each stage. */
  readonly mean: { unnumbered: number; unpublished: number };
}

/**
 * The outbox's backlog while it runs, sampled every 500 ms; `caughtUpAt` is when the numbered events waiting fell
 * below `below`.
 */
function watchBacklog(pool: pg.Pool, exchange: string, below = 0) {
  const worst = { unnumbered: 0, unpublished: 0 };
  const sum = { unnumbered: 0, unpublished: 0 };
  let samples = 0;
  let caughtUpAt: number | undefined;
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const backlog = await backlogParts(pool, exchange);
      worst.unnumbered = Math.max(worst.unnumbered, backlog.unnumbered);
      worst.unpublished = Math.max(worst.unpublished, backlog.unpublished);
      sum.unnumbered += backlog.unnumbered;
      sum.unpublished += backlog.unpublished;
      samples++;
      if (caughtUpAt === undefined && backlog.unpublished < below) caughtUpAt = wallClockMs();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    caughtUpAt: () => caughtUpAt,
    async stop(): Promise<BacklogSeen> {
      sampling = false;
      await loop;
      const mean = (total: number): number => total / Math.max(1, samples);
      return { worst, mean: { unnumbered: mean(sum.unnumbered), unpublished: mean(sum.unpublished) } };
    },
  };
}

interface LiveRun {
  readonly writes: WriteLoad;
  readonly events: number;
  readonly received: number;
  readonly duplicates: number;
  readonly complete: boolean;
  readonly publishedPerSecond: number;
  readonly writtenPerSecond: number;
  readonly lagMs: { p50: number; p90: number; p99: number; max: number };
  readonly lastEventAfterWritesMs: number;
  readonly backlog: BacklogSeen;
  readonly relayCpu: CpuShare | undefined;
  readonly writerCpu: CpuShare | undefined;
  readonly brokerCpu: number | undefined;
  readonly relayRssMb: number;
}

/** Writes for `seconds` while `relay` publishes: what reaches the consumer meanwhile, and each event's lag. */
async function liveRun(
  ctx: BenchContext,
  relay: RunningServer,
  consumer: BenchConsumer,
  exchange: string,
  seconds: number,
): Promise<LiveRun> {
  const rss = sampleRss(relay.process.pid, 200);
  const relayCpu = watchCpu(relay.process.pid);
  const writerCpu = watchCpu(ctx.service.process.pid);
  const brokerCpu = watchCommandCpu('beam.smp');
  const backlog = watchBacklog(ctx.db.pool, exchange);
  const received = consumer.deliveries.length;
  const progress = startProgress('scenario 16: writes while the relay publishes', seconds);
  const started = wallClockMs();
  const ticker = setInterval(() => {
    const elapsed = Math.min(seconds, Math.round((wallClockMs() - started) / 1000));
    const at = consumer.deliveries.length - received;
    progress.update(elapsed, `${at.toLocaleString('en-US')} events at the consumer`);
  }, 1000);
  const writes = await writeFor(ctx, 'L', seconds);
  clearInterval(ticker);
  progress.finish();
  const writerShare = writerCpu.stop();
  const events = writes.answeredAt.size * PRODUCTS_PER_WRITE;
  const found = (): number => arrivals(consumer.deliveries.slice(received), writes).length;
  // Duplicates would count towards the first condition; the second, slower one makes sure of distinct events.
  const complete =
    (await consumer.waitUntil(() => consumer.deliveries.length - received >= events, DRAIN_GIVE_UP_MS)) &&
    (await consumer.waitUntil(() => found() >= events, DRAIN_GIVE_UP_MS));
  const drainedAt = wallClockMs();
  const relayShare = relayCpu.stop();
  const brokerShare = brokerCpu.stop();
  const backlogSeen = await backlog.stop();
  const deliveries = consumer.deliveries.slice(received);
  const seen = arrivals(deliveries, writes);
  const lags = seen.map((arrival) => arrival.lagMs).sort((a, b) => a - b);
  const during = seen.filter((arrival) => arrival.atMs <= writes.endedAt).length;
  const writeSeconds = (writes.endedAt - writes.startedAt) / 1000;
  return {
    writes,
    events,
    received: seen.length,
    duplicates:
      deliveries.filter((delivery) => writes.answeredAt.has(delivery.correlationId ?? '')).length - seen.length,
    complete,
    publishedPerSecond: during / writeSeconds,
    writtenPerSecond: events / writeSeconds,
    lagMs: {
      p50: percentileOf(lags, 50),
      p90: percentileOf(lags, 90),
      p99: percentileOf(lags, 99),
      max: lags.at(-1) ?? Number.NaN,
    },
    lastEventAfterWritesMs: drainedAt - writes.endedAt,
    backlog: backlogSeen,
    relayCpu: relayShare,
    writerCpu: writerShare,
    brokerCpu: brokerShare,
    relayRssMb: rss.stop(),
  };
}

interface CatchUpRun {
  /** Numbered events waiting when the relaying instance started. */
  readonly backlogAtStart: number;
  /** From the relaying instance's start to its first event at the consumer: start-up, connecting, the lease. */
  readonly firstEventMs: number | undefined;
  /** From that first event until caught up. */
  readonly seconds: number | undefined;
  readonly eventsPerSecond: number | undefined;
  readonly relayCpu: CpuShare | undefined;
  readonly brokerCpu: number | undefined;
}

/**
 * The relay's ceiling: writes run HEAD_START_SECONDS with no relay, then a new relaying instance publishes the
 * backlog they left; its pace from the first event at the consumer until fewer than CAUGHT_UP_BELOW numbered
 * events wait (its start-up is reported apart).
 */
async function catchUpRun(ctx: BenchContext, consumer: BenchConsumer, exchange: string): Promise<CatchUpRun> {
  step(`scenario 16: ${HEAD_START_SECONDS} s of writes with no relay, then a relay publishing their backlog`);
  await writeFor(ctx, 'C', HEAD_START_SECONDS);
  const backlogAtStart = (await backlogParts(ctx.db.pool, exchange)).unpublished;
  const received = consumer.deliveries.length;
  const startedAt = wallClockMs();
  const { service } = await startRelayingService(ctx, CATCH_UP_LOG_NAME, { waitForBacklog: false });
  try {
    const relayCpu = watchCpu(service.process.pid);
    const brokerCpu = watchCommandCpu('beam.smp');
    const backlog = watchBacklog(ctx.db.pool, exchange, CAUGHT_UP_BELOW);
    await consumer.waitUntil(() => backlog.caughtUpAt() !== undefined, DRAIN_GIVE_UP_MS);
    const caughtUpAt = backlog.caughtUpAt();
    const relayShare = relayCpu.stop();
    const brokerShare = brokerCpu.stop();
    await backlog.stop();
    const arrivals = consumer.deliveries.slice(received).filter((delivery) => delivery.atMs <= (caughtUpAt ?? 0));
    const firstAt = arrivals[0]?.atMs;
    const seconds = caughtUpAt === undefined || firstAt === undefined ? undefined : (caughtUpAt - firstAt) / 1000;
    return {
      backlogAtStart,
      firstEventMs: firstAt === undefined ? undefined : firstAt - startedAt,
      seconds,
      eventsPerSecond: seconds === undefined ? undefined : arrivals.length / seconds,
      relayCpu: relayShare,
      brokerCpu: brokerShare,
    };
  } finally {
    await stopEventsService(service);
  }
}

/**
 * Scenario 16 (issue 29): the relay under writes (many requests, not one bulk). First BENCH_RELAY_DURATION seconds
 * of writes while one instance relays the outbox to a consumer's queue: the events/s that reach the consumer
 * meanwhile and each event's lag from its request's 201. Then the relay's ceiling: a relay that starts behind the
 * backlog of 20 s of writes, and its pace until it has caught up.
 */
export function relaySustained(ctx: BenchContext): Promise<ScenarioResult> {
  return withBroker(ctx, 16, () => measureRelay(ctx));
}

async function measureRelay(ctx: BenchContext): Promise<ScenarioResult> {
  const { amqpUrl, relayDuration } = ctx.config;
  step(`scenario 16: ${WRITERS} writers × ${PRODUCTS_PER_WRITE} products a request, ${relayDuration} s`);
  const exchange = benchExchange(amqpUrl);
  const consumer = await consumeEvents(amqpUrl, exchange, EVENT_TYPE);
  const { service, drained } = await startRelayingService(ctx, LOG_NAME);
  let live: LiveRun;
  try {
    live = await liveRun(ctx, service, consumer, exchange, relayDuration);
  } finally {
    await stopEventsService(service);
  }
  const catchUp = await catchUpRun(ctx, consumer, exchange);
  const resets = consumer.resets();
  await consumer.close();
  const warnings = [...(await logWarnings(LOG_NAME)), ...(await logWarnings(CATCH_UP_LOG_NAME))];
  const share = (value: number | undefined): string => (value === undefined ? '–' : `${formatNumber(value)} %`);
  const ceiling = catchUp.eventsPerSecond;
  return {
    id: 16,
    title: `Relay under ${relayDuration} s of bulk writes: ${EVENT_TYPE} at a consumer while they go on`,
    service: {
      label: 'live: events/s at the consumer during the writes; p50 / p99: 201 → event at the consumer',
      throughput: live.publishedPerSecond,
      unit: 'events/s',
      p50Ms: live.lagMs.p50,
      p99Ms: live.lagMs.p99,
      peakRssMb: live.relayRssMb,
      cpu: live.relayCpu,
    },
    extra: [
      {
        label: `the writes: ${WRITERS} writers × ${PRODUCTS_PER_WRITE} products a request, to another instance`,
        throughput: live.writtenPerSecond,
        unit: 'events/s',
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
        peakRssMb: Number.NaN,
        cpu: live.writerCpu,
      },
      {
        label: `catching up: a relay started behind the backlog of ${HEAD_START_SECONDS} s of writes`,
        throughput: ceiling ?? Number.NaN,
        unit: 'events/s',
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
        peakRssMb: Number.NaN,
        cpu: catchUp.relayCpu,
      },
    ],
    targets: [
      {
        target: `one instance publishes ≥ ${MIN_EVENTS_PER_SECOND.toLocaleString('en-US')} events/s`,
        actual:
          ceiling === undefined
            ? `did not catch up within ${DRAIN_GIVE_UP_MS / 1000} s`
            : `${formatNumber(ceiling)} events/s catching up; ${formatNumber(live.publishedPerSecond)} events/s live, where the writes offered ${formatNumber(live.writtenPerSecond)}/s`,
        met: ceiling !== undefined && ceiling >= MIN_EVENTS_PER_SECOND,
      },
      {
        target: 'every event written reaches the consumer, none lost',
        actual: live.complete
          ? `${live.received.toLocaleString('en-US')} of ${live.events.toLocaleString('en-US')} (${live.duplicates} duplicates)`
          : `incomplete: ${live.received.toLocaleString('en-US')} of ${live.events.toLocaleString('en-US')} after ${DRAIN_GIVE_UP_MS / 1000} s`,
        met: live.complete && live.received === live.events,
      },
    ],
    details: {
      writers: WRITERS,
      productsPerWrite: PRODUCTS_PER_WRITE,
      live: { ...live, writes: { requests: live.writes.answeredAt.size, failures: live.writes.failures } },
      catchUp,
      drainedBeforeRuns: drained,
      consumerResets: resets,
      warnings,
    },
    notes: [
      `Live: ${live.writes.answeredAt.size.toLocaleString('en-US')} bulk requests (${live.writes.failures} failed) wrote ${live.events.toLocaleString('en-US')} events at ${formatNumber(live.writtenPerSecond)}/s; ${formatNumber(live.publishedPerSecond)} events/s reached the consumer while the writes went on, the last ${formatNumber(live.lastEventAfterWritesMs)} ms after they ended. Lag from a request's 201 to its event at the consumer: p50 ${formatNumber(live.lagMs.p50)} ms, p90 ${formatNumber(live.lagMs.p90)} ms, p99 ${formatNumber(live.lagMs.p99)} ms, max ${formatNumber(live.lagMs.max)} ms. Events waiting to be numbered: ${formatNumber(live.backlog.mean.unnumbered)} on average, at most ${live.backlog.worst.unnumbered.toLocaleString('en-US')}; numbered and waiting to be published: ${formatNumber(live.backlog.mean.unpublished)}, at most ${live.backlog.worst.unpublished.toLocaleString('en-US')} (sampled every 0.5 s; by Little's law about ${formatNumber((live.backlog.mean.unnumbered / live.writtenPerSecond) * 1000)} ms of an event's lag is spent waiting for its number and ${formatNumber((live.backlog.mean.unpublished / live.writtenPerSecond) * 1000)} ms waiting for the relay). RabbitMQ used ${share(live.brokerCpu)} of a core.`,
      `Catching up: after ${HEAD_START_SECONDS} s of writes with no relay, ${catchUp.backlogAtStart.toLocaleString('en-US')} numbered events waited; a new relaying instance ${catchUp.seconds === undefined ? `had not caught up within ${DRAIN_GIVE_UP_MS / 1000} s` : `delivered its first event ${formatNumber(catchUp.firstEventMs ?? Number.NaN)} ms after its start and then brought the backlog under ${CAUGHT_UP_BELOW.toLocaleString('en-US')} in ${formatNumber(catchUp.seconds, 1)} s: ${formatNumber(ceiling ?? Number.NaN)} events/s at the consumer`}; RabbitMQ used ${share(catchUp.brokerCpu)} of a core.`,
      "The relay rows' CPU is the relaying instance's (it takes no requests); the writes row's is the instance taking the writes. The consumer runs in the load generator.",
      warnings.length === 0
        ? 'The relaying instances logged nothing at warn or above.'
        : `The relaying instances logged: ${warnings.join('; ')}.`,
    ],
  };
}
