import { watchCommandCpu, watchCpu, type CpuShare } from './cpu-share.js';
import {
  benchExchange,
  consumeEvents,
  logWarnings,
  publishedAt,
  withBroker,
  startRelayingService,
  stopEventsService,
  type BenchConsumer,
} from './events.js';
import { sampleRss } from './processes.js';
import { startProgress, step } from './progress.js';
import { formatNumber, median, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { outboxEventsOf, postProducts, rows, WARMUP_PRODUCTS } from './scenario-3-bulk-create.js';
import type { RunningServer } from './service.js';

const MAX_DELIVERY_MS = 10_000;
// How long to wait for the last event after the 201 before the run is given up as incomplete.
const GIVE_UP_MS = 120_000;
const LOG_NAME = 'service-events-9';
const EVENT_TYPE = 'product.event.created';

interface DeliveryRun {
  readonly requestMs: number;
  readonly requestRssMb: number;
  readonly requestCpu: CpuShare | undefined;
  /** Events the request wrote to the outbox, and how many distinct ones reached the consumer. */
  readonly written: number;
  readonly received: number;
  readonly duplicates: number;
  /** From the 201 to the first and to the last of the request's events at the consumer. */
  readonly firstMs: number;
  readonly lastMs: number;
  /** From the 201 to an empty backlog in the instance's health: all numbered and confirmed by the broker. */
  readonly publishedMs: number;
  /** The request's events per second between the first and the last arrival: the relay's pace. */
  readonly relayPerSecond: number;
  readonly relayRssMb: number;
  readonly relayCpu: CpuShare | undefined;
  readonly brokerCpu: number | undefined;
}

/** Posts `count` products in one request, then waits until all their events are at the consumer (or gives up). */
async function deliverBulk(
  ctx: BenchContext,
  service: RunningServer,
  consumer: BenchConsumer,
  prefix: string,
  count: number,
  requestId: string,
): Promise<DeliveryRun> {
  let scanned = consumer.deliveries.length;
  const ids = new Set<string>();
  let matching = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  const scan = (): boolean => {
    const deliveries = consumer.deliveries;
    for (; scanned < deliveries.length; scanned++) {
      const delivery = deliveries[scanned]!;
      if (delivery.correlationId !== requestId || delivery.routingKey !== EVENT_TYPE) continue;
      matching++;
      if (delivery.messageId === undefined || ids.has(delivery.messageId)) continue;
      ids.add(delivery.messageId);
      if (Number.isNaN(first)) first = delivery.atMs;
      last = delivery.atMs;
    }
    return ids.size >= count;
  };
  const posted = await postProducts(ctx, rows(prefix, count), requestId, service);
  const rss = sampleRss(service.process.pid, 50);
  const cpu = watchCpu(service.process.pid);
  const broker = watchCommandCpu('beam.smp');
  const [published] = await Promise.all([publishedAt(service, GIVE_UP_MS), consumer.waitUntil(scan, GIVE_UP_MS)]);
  const relayCpu = cpu.stop();
  const brokerCpu = broker.stop();
  const relayRssMb = rss.stop();
  return {
    requestMs: posted.ms,
    requestRssMb: posted.rssMb,
    requestCpu: posted.cpu,
    written: await outboxEventsOf(ctx.db.pool, requestId),
    received: ids.size,
    duplicates: matching - ids.size,
    firstMs: first - posted.answeredAtMs,
    lastMs: last - posted.answeredAtMs,
    publishedMs: (published ?? Number.NaN) - posted.answeredAtMs,
    relayPerSecond: ids.size > 1 ? ((ids.size - 1) / (last - first)) * 1000 : Number.NaN,
    relayRssMb,
    relayCpu,
    brokerCpu,
  };
}

/**
 * Scenario 9: scenario 3's bulk POST of N products against an instance of the service with AMQP_URL set, with a
 * consumer bound to `product.event.created`: the time from the 201 to the last of the N events at the consumer,
 * and the relay's pace (events/s between the first and the last arrival).
 */
export function eventsBulk(ctx: BenchContext): Promise<ScenarioResult> {
  return withBroker(ctx, 9, () => measureEventsBulk(ctx));
}

async function measureEventsBulk(ctx: BenchContext): Promise<ScenarioResult> {
  const { bulkProducts: count, bulkRuns: runs, amqpUrl } = ctx.config;
  step(`scenario 9: bulk POST of ${count.toLocaleString('en-US')} products with events, ${runs} runs`);
  const { service, drained } = await startRelayingService(ctx, LOG_NAME);
  try {
    const consumer = await consumeEvents(amqpUrl, benchExchange(amqpUrl), EVENT_TYPE);
    await deliverBulk(ctx, service, consumer, 'W9', WARMUP_PRODUCTS, 'bench-s9-warmup');
    const results: DeliveryRun[] = [];
    const progress = startProgress('scenario 9 runs', runs);
    for (let run = 1; run <= runs; run++) {
      results.push(await deliverBulk(ctx, service, consumer, `C${run}`, count, `bench-s9-${run}`));
      const latest = results.at(-1)!;
      progress.update(
        run,
        `request ${Math.round(latest.requestMs)} ms, last event ${Math.round(latest.lastMs)} ms after the 201`,
      );
    }
    progress.finish();
    const resets = consumer.resets();
    await consumer.close();
    const warnings = await logWarnings(LOG_NAME);

    const complete = results.every((run) => run.received === count && run.written === count);
    const slowest = Math.max(...results.map((run) => (run.received === count ? run.lastMs : Number.POSITIVE_INFINITY)));
    const medianLast = median(results.map((run) => run.lastMs));
    const relayPerSecond = median(results.map((run) => run.relayPerSecond));
    const requestMs = median(results.map((run) => run.requestMs));
    const targets: TargetCheck[] = [
      {
        target: `all ${count.toLocaleString('en-US')} events at the consumer ≤ ${MAX_DELIVERY_MS / 1000} s after the 201`,
        actual: complete
          ? `${formatNumber(slowest / 1000, 1)} s in the slowest of ${runs} runs (median ${formatNumber(medianLast / 1000, 1)} s)`
          : `incomplete: ${results.map((run) => `${run.received.toLocaleString('en-US')} of ${run.written.toLocaleString('en-US')} written`).join(', ')} after ${GIVE_UP_MS / 1000} s`,
        met: complete && slowest <= MAX_DELIVERY_MS,
      },
    ];
    const last = results.at(-1)!;
    return {
      id: 9,
      title: `Bulk POST of ${count.toLocaleString('en-US')} products with events: 201 → last ${EVENT_TYPE} at a consumer`,
      service: {
        label: 'relay: events/s; p50 / p99: 201 → last event at the consumer (median / slowest run)',
        throughput: relayPerSecond,
        unit: 'events/s',
        p50Ms: medianLast,
        p99Ms: Math.max(...results.map((run) => run.lastMs)),
        peakRssMb: Math.max(...results.map((run) => Math.max(run.requestRssMb, run.relayRssMb))),
        cpu: last.relayCpu,
      },
      extra: [
        {
          label: 'the bulk request itself, events on (p50 / p99: median / slowest request)',
          throughput: (count / requestMs) * 1000,
          unit: 'products/s',
          p50Ms: requestMs,
          p99Ms: Math.max(...results.map((run) => run.requestMs)),
          peakRssMb: Math.max(...results.map((run) => run.requestRssMb)),
          cpu: last.requestCpu,
        },
      ],
      targets,
      details: { runs: results, drainedBeforeRuns: drained, consumerResets: resets, warnings },
      notes: [
        `Per run: ${results
          .map(
            (run, index) =>
              `#${index + 1} request ${formatNumber(run.requestMs)} ms, first event ${formatNumber(run.firstMs)} ms, all published (backlog 0) ${formatNumber(run.publishedMs)} ms and last event ${formatNumber(run.lastMs)} ms after the 201, ${formatNumber(run.relayPerSecond)} events/s, ${run.received.toLocaleString('en-US')} of ${run.written.toLocaleString('en-US')} events (${run.duplicates} duplicates), RabbitMQ ${run.brokerCpu === undefined ? '–' : `${formatNumber(run.brokerCpu)} %`} of a core`,
          )
          .join('; ')}.`,
        'The relay row: events/s between the first and the last event of the request at the consumer; its CPU columns are of the last run from the 201 to the last event (RabbitMQ counts under other processes, the consumer under the load generator).',
        `Before the runs the instance published the ${drained.events.toLocaleString('en-US')} events earlier scenarios had left in the outbox (to no queue) within ${formatNumber(drained.seconds, 1)} s of its start, start-up included (${drained.seconds > 0 ? formatNumber(drained.events / drained.seconds) : '–'} events/s); the consumer's channel was set up again ${resets} times.`,
        warnings.length === 0
          ? 'The events instance logged nothing at warn or above.'
          : `The events instance logged: ${warnings.join('; ')}.`,
      ],
    };
  } finally {
    await stopEventsService(service);
  }
}
