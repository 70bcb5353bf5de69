import type pg from 'pg';
import { watchCommandCpu } from './cpu-share.js';
import {
  benchExchange,
  consumeEvents,
  logWarnings,
  percentileOf,
  withBroker,
  startRelayingService,
  stopEventsService,
  type Delivery,
} from './events.js';
import { step } from './progress.js';
import {
  formatNumber,
  measurementOf,
  ratioOf,
  type BenchContext,
  type Measurement,
  type ScenarioResult,
  type TargetCheck,
} from './results.js';
import { mixedChecks, mixedNotes, mixedStock, runMixed } from './scenario-6-mixed.js';
import type { StockShape } from './seed.js';

const MIN_RATIO = 0.9;
const MAX_LATENCY_P99_MS = 250;
// After the load stops: how long the consumer may still take to get every event of the answered requests.
const DELIVERY_WAIT_MS = 30_000;
const REQUEST_ID_PREFIX = 'bench-s8';
const LOG_NAME = 'service-events-8';

/** Scenario 6's stock shape again under other SKUs, so both runs start from the same stock. */
export const eventsMixedStock: StockShape = { ...mixedStock, productPrefix: 'E', tuPrefix: 'TE' };

interface Latencies {
  readonly sorted: number[];
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function latencies(values: number[]): Latencies {
  const sorted = values.sort((a, b) => a - b);
  return { sorted, p50Ms: percentileOf(sorted, 50), p99Ms: percentileOf(sorted, 99) };
}

/** When each event of the measured requests began: `occurred_at` is its transaction's start (now()). */
async function occurredAt(pool: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ id: string; ms: number }>(
    `SELECT id::text AS id, (extract(epoch FROM occurred_at) * 1000)::float8 AS ms
       FROM event_outbox WHERE request_id LIKE $1 || '-%'`,
    [REQUEST_ID_PREFIX],
  );
  return new Map(rows.map((row) => [row.id, row.ms]));
}

/** The first delivery of each message of the measured requests (a redelivery would count once). */
function firstDeliveries(deliveries: readonly Delivery[]): Map<string, Delivery> {
  const first = new Map<string, Delivery>();
  for (const delivery of deliveries) {
    if (!delivery.correlationId?.startsWith(`${REQUEST_ID_PREFIX}-`) || delivery.messageId === undefined) continue;
    if (!first.has(delivery.messageId)) first.set(delivery.messageId, delivery);
  }
  return first;
}

/**
 * Scenario 8: scenario 6's mixed workload against a second instance of the service with AMQP_URL set (an
 * exchange of this run), while a consumer bound to `#` on a fresh queue drains it. Throughput and latencies
 * against scenario 6 of the same run (events off), and each event's latency from the answer to its request
 * (matched by correlation id = X-Request-Id) to its arrival at the consumer.
 */
export function eventsMixed(
  ctx: BenchContext,
  unitKeys: readonly string[],
  baseline: ScenarioResult | undefined,
): Promise<ScenarioResult> {
  return withBroker(ctx, 8, () => measureEventsMixed(ctx, unitKeys, baseline));
}

async function measureEventsMixed(
  ctx: BenchContext,
  unitKeys: readonly string[],
  baseline: ScenarioResult | undefined,
): Promise<ScenarioResult> {
  if (!baseline) throw new Error('scenario 8 needs the events-off figures of scenario 6 in the same run, which failed');
  const { config, db } = ctx;
  step(`scenario 8: mixed workload for ${config.mixedDuration} s with events published to RabbitMQ`);
  const { service, drained } = await startRelayingService(ctx, LOG_NAME);
  try {
    const consumer = await consumeEvents(config.amqpUrl, benchExchange(config.amqpUrl));
    const answeredAt = new Map<string, number>();
    let brokerCpu: number | undefined;
    const run = await runMixed(ctx, unitKeys, {
      label: 'scenario 8 service, events on',
      service,
      stock: eventsMixedStock,
      requestIdPrefix: REQUEST_ID_PREFIX,
      onAnswer: (answer) => {
        if (answer.requestId && (answer.kind === 'move' || answer.kind === 'allocate')) {
          answeredAt.set(answer.requestId, answer.atMs);
        }
      },
      onMeasured: () => {
        const watch = watchCommandCpu('beam.smp');
        return () => (brokerCpu = watch.stop());
      },
    });
    const { measured } = run;

    // Every event the measured requests wrote must reach the consumer; requests cut off by the end of the load
    // have committed by now (runMixed waits a second), so the outbox holds them all.
    const expected = (await occurredAt(db.pool)).size;
    const delivered = await consumer.waitUntil(
      () => firstDeliveries(consumer.deliveries).size >= expected,
      DELIVERY_WAIT_MS,
    );
    await consumer.close();
    const firsts = firstDeliveries(consumer.deliveries);
    const started = await occurredAt(db.pool);
    const ours = consumer.deliveries.filter((d) => d.correlationId?.startsWith(`${REQUEST_ID_PREFIX}-`));

    const fromAnswer: number[] = [];
    const fromStart: number[] = [];
    let unmatched = 0;
    for (const [messageId, delivery] of firsts) {
      const answered = answeredAt.get(delivery.correlationId!);
      if (answered === undefined) unmatched++;
      else fromAnswer.push(delivery.atMs - answered);
      const began = started.get(messageId);
      if (began !== undefined) fromStart.push(delivery.atMs - began);
    }
    const lower = latencies(fromAnswer);
    const upper = latencies(fromStart);
    const beforeAnswer = lower.sorted.filter((ms) => ms < 0).length;
    const ratio = ratioOf(measured.requestsPerSecond, baseline.service.throughput) ?? 0;
    const eventsPerSecond = firsts.size / measured.seconds;
    const warnings = await logWarnings(LOG_NAME);

    const targets: TargetCheck[] = [
      {
        target: `≥ ${MIN_RATIO} × events off (scenario 6)`,
        actual: `${ratio.toFixed(2)} × (${formatNumber(measured.requestsPerSecond)} ÷ ${formatNumber(baseline.service.throughput)} req/s)`,
        met: ratio >= MIN_RATIO,
      },
      {
        target: `commit → consumer p99 < ${MAX_LATENCY_P99_MS} ms`,
        actual:
          lower.sorted.length === 0
            ? 'no event of an answered request arrived'
            : `p99 ${formatNumber(lower.p99Ms)} ms (p50 ${formatNumber(lower.p50Ms, 1)} ms)`,
        met: lower.sorted.length > 0 && lower.p99Ms < MAX_LATENCY_P99_MS,
      },
      {
        target: 'every event of the run at the consumer',
        actual:
          expected === 0
            ? 'no events in the outbox from the run: the writes did not write events'
            : `${firsts.size.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')}${delivered ? '' : ` after waiting ${DELIVERY_WAIT_MS / 1000} s`}`,
        met: expected > 0 && firsts.size === expected,
      },
      ...mixedChecks(run),
    ];
    const extra: Measurement[] = [
      {
        label: 'events: answer → consumer (a lower bound of commit → consumer)',
        throughput: eventsPerSecond,
        unit: 'events/s',
        p50Ms: lower.p50Ms,
        p99Ms: lower.p99Ms,
      },
      {
        label: 'events: transaction start (occurred_at) → consumer (an upper bound)',
        throughput: eventsPerSecond,
        unit: 'events/s',
        p50Ms: upper.p50Ms,
        p99Ms: upper.p99Ms,
      },
    ];
    return {
      id: 8,
      title: `Mixed workload with events published to RabbitMQ (AMQP_URL set), ${config.mixedDuration} s`,
      service: measurementOf('service, events on', measured),
      ceiling: { ...baseline.service, label: 'events off: scenario 6 of this run' },
      ratio,
      ratioBasis: 'req/s, events on ÷ events off',
      targets,
      extra,
      details: {
        service: measured,
        errors: run.errors,
        serverErrors: run.serverErrors,
        unexpected: run.unexpected,
        violations: run.violations,
        allocations: run.allocations,
        events: {
          written: run.eventsWritten,
          expected,
          delivered: firsts.size,
          deliveries: ours.length,
          unmatched,
          beforeAnswer,
          fromAnswer: {
            p50Ms: lower.p50Ms,
            p90Ms: percentileOf(lower.sorted, 90),
            p99Ms: lower.p99Ms,
            maxMs: lower.sorted.at(-1),
          },
          fromTransactionStart: { p50Ms: upper.p50Ms, p99Ms: upper.p99Ms, maxMs: upper.sorted.at(-1) },
          drainedBeforeRun: drained,
          consumerResets: consumer.resets(),
          brokerCpuPercent: brokerCpu,
          warnings,
        },
      },
      notes: [
        `Latency of each event (${lower.sorted.length.toLocaleString('en-US')} events of ${answeredAt.size.toLocaleString('en-US')} answered writes): from the moment the runner had its request's answer (matched by correlation id = the X-Request-Id the runner sent) to the moment the consumer's handler ran, both on the runner's clock. It leaves out the answer's way back, so it is a lower bound of commit → consumer; ${beforeAnswer.toLocaleString('en-US')} events arrived before their answer (negative values, kept). p90 ${formatNumber(percentileOf(lower.sorted, 90), 1)} ms, max ${formatNumber(lower.sorted.at(-1) ?? Number.NaN)} ms.`,
        `Measured from \`occurred_at\` instead (the transaction's start, so it includes the transaction itself: an upper bound): p50 ${formatNumber(upper.p50Ms, 1)} ms, p99 ${formatNumber(upper.p99Ms)} ms.`,
        `Events: ${run.eventsWritten.toLocaleString('en-US')} written to the outbox during the measured run, ${firsts.size.toLocaleString('en-US')} of its requests' ${expected.toLocaleString('en-US')} at the consumer (${ours.length - firsts.size} deliveries more than once), ${unmatched} of them of requests cut off by the end of the load (no answer to match); the consumer's channel was set up again ${consumer.resets()} times.`,
        `Before the run the new instance published the ${drained.events.toLocaleString('en-US')} events earlier scenarios had left in the outbox (to no queue) within ${formatNumber(drained.seconds, 1)} s of its start.`,
        `RabbitMQ (beam.smp, not started by the benchmark, so under "other processes") used ${brokerCpu === undefined ? '–' : `${formatNumber(brokerCpu)} %`} of a core during the measured run; the consumer runs in the runner (load generator).`,
        warnings.length === 0
          ? 'The events instance logged nothing at warn or above.'
          : `The events instance logged: ${warnings.join('; ')}.`,
        ...mixedNotes(measured),
      ],
    };
  } finally {
    await stopEventsService(service);
  }
}
