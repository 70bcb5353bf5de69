import os from 'node:os';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { registerTypeParsers } from '../src/db/type-parsers.js';
import { quietLogger } from './database.js';
import { withBroker } from './events.js';
import { step } from './progress.js';
import type { WaitProfile } from './pg-waits.js';
import { OUTSIDE_SECONDS, pruneWhileWriting, type FeedDelays, type PruneUnderWriters } from './prune-under-writers.js';
import { formatNumber, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { measureWalAndSpace, type WalAndSpace } from './wal-and-space.js';

const MAX_FEED_DELAY_MS = 1000;

/** What scenario 17 keeps in its result's details, for the report's table of issue 29's figures. */
export interface PruneScenarioDetails {
  readonly prune: PruneUnderWriters;
  readonly walAndSpace: WalAndSpace;
  /** The 1-minute load average at the scenario's start and end. */
  readonly loadAverage: { readonly start: number; readonly end: number };
}

const ms = (value: number): string => `${formatNumber(value)} ms`;
const delays = (d: FeedDelays): string => `worst ${ms(d.worstMs)}, p99 ${ms(d.p99Ms)}, p50 ${ms(d.p50Ms)}`;
const waits = (profile: WaitProfile): string =>
  Object.entries(profile.connectionsByState)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ') || 'none';
/** Bytes a row as MB per 1,000,000 rows (the same number). */
const perMillion = (bytesPerRow: number): string => `${formatNumber(bytesPerRow)} MB`;

function targetsOf(prune: PruneUnderWriters): TargetCheck[] {
  const { lost, duplicated, renumbered, brokerDuplicates } = prune;
  const { before, during, after } = prune.feedDelays;
  const faults = lost.outbox + lost.feed + lost.broker + duplicated + renumbered + brokerDuplicates;
  return [
    {
      target: `worst commit-to-feed delay during the prune < ${formatNumber(MAX_FEED_DELAY_MS)} ms`,
      actual: `${ms(during.worstMs)} (before it ${ms(before.worstMs)}, after it ${ms(after.worstMs)})`,
      met: during.worstMs < MAX_FEED_DELAY_MS,
    },
    {
      target: 'every old part dropped whole; the feed starts where the old events end',
      actual: `${prune.removed.toLocaleString('en-US')} of ${prune.oldEvents.toLocaleString('en-US')} events in ${prune.partsDropped} parts`,
      met: prune.removed === prune.oldEvents && prune.feedStartsAfterOldEvents,
    },
    {
      target: 'no write lost, duplicated or renumbered (outbox, feed, broker)',
      actual:
        faults === 0
          ? `none of ${prune.writes.toLocaleString('en-US')}`
          : `missing: outbox ${lost.outbox}, feed ${lost.feed}, broker ${lost.broker}; twice: outbox ${duplicated}, broker ${brokerDuplicates}; renumbered ${renumbered}`,
      met: faults === 0,
    },
  ];
}

function notesOf(details: PruneScenarioDetails): string[] {
  const { prune, walAndSpace: w, loadAverage } = details;
  return [
    `Load average (1 min) ${formatNumber(loadAverage.start, 2)} at the scenario's start, ${formatNumber(loadAverage.end, 2)} at its end.`,
    `Fill: ${prune.oldEvents.toLocaleString('en-US')} events 30 days old, published, in parts of ${prune.partitionSize.toLocaleString('en-US')}, in ${formatNumber(prune.fillSeconds, 1)} s (test/support/old-events.ts).`,
    `Prune (src/events/retention.ts, run by the runner against the relaying instance's database): ${formatNumber(prune.pruneSeconds, 1)} s, ${prune.partsDropped} parts dropped, ${prune.removed.toLocaleString('en-US')} events.`,
    `${prune.writers} writers (POST /v1/products, one Product and one event each) committed ${prune.writesDuringPrune.toLocaleString('en-US')} writes during the prune: ${prune.inFeedBeforePruneEnded.toLocaleString('en-US')} were in the feed (GET /v1/events) and ${prune.atBrokerBeforePruneEnded.toLocaleString('en-US')} at the consumer before it ended; ${prune.writes.toLocaleString('en-US')} writes in all, ${prune.failedWrites} not answered 201.`,
    `Commit-to-feed delay (from the 201's arrival to the feed page that showed the event): during the prune ${delays(prune.feedDelays.during)}; in the ${formatNumber(OUTSIDE_SECONDS)} s before it (old events kept) ${delays(prune.feedDelays.before)}; in the ${formatNumber(OUTSIDE_SECONDS)} s after it ${delays(prune.feedDelays.after)}.`,
    `The instance's PostgreSQL connections during the prune, on average (pg_stat_activity every 50 ms): requests ${waits(prune.waitsDuringPrune.requests)}; events (numbering, relay) ${waits(prune.waitsDuringPrune.events)}.`,
    `WAL and space, measured on ${w.rows.toLocaleString('en-US')} rows each and scaled to 1,000,000: an event (resource ${formatNumber(w.resourceBytes)} B of JSON) writes ${perMillion(w.eventAppendedWal)} of WAL appended and ${perMillion(w.eventNumberedWal)} numbered, occupies ${perMillion(w.eventSpace)} in its part; a ledger row (a MOVE with both places) writes ${perMillion(w.ledgerWal)} and occupies ${perMillion(w.ledgerSpace)} (appending ${formatNumber(w.seconds.append, 1)} s, numbering ${formatNumber(w.seconds.number, 1)} s, ledger ${formatNumber(w.seconds.ledger, 1)} s).`,
    prune.warnings.length === 0
      ? 'The relaying instance logged nothing at warn or above.'
      : `The relaying instance logged: ${prune.warnings.join('; ')}.`,
  ];
}

/**
 * Scenario 17 (issue 29): pruning BENCH_PRUNE_EVENTS old events while 4 writers run, then the WAL and space of
 * BENCH_WAL_ROWS events and ledger rows. On a database of its own: the run's outbox holds earlier scenarios'
 * young events in its first parts, which would keep every part after them (parts go oldest first).
 */
export async function outboxPrune(ctx: BenchContext): Promise<ScenarioResult> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  // The service's statements this scenario runs read bigint positions as numbers, as in the service. Process-wide:
  // the scenario runs last.
  registerTypeParsers();
  const { pruneEvents, walRows } = ctx.config;
  step(`scenario 17: prune of ${pruneEvents.toLocaleString('en-US')} events, WAL and space of ${walRows} rows`);
  const url = await ctx.db.createDatabase('prune');
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'inventory-bench' });
  pool.on('error', () => undefined);
  try {
    await migrate(pool, quietLogger());
    const prune = await withBroker(ctx, 17, () => pruneWhileWriting(ctx, { url, pool }, pruneEvents));
    const walAndSpace = await measureWalAndSpace(pool, walRows, prune.partitionSize);
    const details: PruneScenarioDetails = {
      prune,
      walAndSpace,
      loadAverage: { start: loadAtStart, end: os.loadavg()[0] ?? 0 },
    };
    const duringSeconds = prune.pruneSeconds;
    return {
      id: 17,
      title: `Prune of ${pruneEvents.toLocaleString('en-US')} old events while ${prune.writers} writers run; WAL and space per 1,000,000 events and ledger rows`,
      service: {
        label: 'writes during the prune; p50 / p99: their commit-to-feed delay (relaying instance)',
        throughput: duringSeconds > 0 ? prune.writesDuringPrune / duringSeconds : 0,
        unit: 'writes/s',
        p50Ms: prune.feedDelays.during.p50Ms,
        p99Ms: prune.feedDelays.during.p99Ms,
        peakRssMb: prune.instanceRssMb,
        cpu: prune.instanceCpu,
      },
      extra: [
        {
          label: 'the prune itself: events removed per second',
          throughput: duringSeconds > 0 ? prune.removed / duringSeconds : 0,
          unit: 'events/s',
        },
      ],
      targets: targetsOf(prune),
      details: { ...details },
      notes: notesOf(details),
    };
  } finally {
    await pool.end();
  }
}
