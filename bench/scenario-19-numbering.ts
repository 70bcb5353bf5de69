import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { registerTypeParsers } from '../src/db/type-parsers.js';
import { FeedSignal } from '../src/events/feed-signal.js';
import { Sequencer } from '../src/events/sequencer.js';
import { fillUnnumberedBacklog, restoreAutovacuum } from '../test/support/unnumbered-backlog.js';
import { quietLogger } from './database.js';
import { step } from './progress.js';
import { formatNumber, type BenchContext, type ScenarioResult } from './results.js';

const TARGET_SECONDS = 20;
const BACKLOG = Number(process.env.BENCH_NUMBERING_EVENTS ?? 1_000_000);

/**
 * Scenario 19 (issue 33, D39): a backlog of BENCH_NUMBERING_EVENTS (default 1,000,000) committed, unnumbered events
 * in a database of its own, with the statistics taken while the default part was empty; the service's Sequencer
 * numbers it. Reported: the seconds until the last is numbered, and events/s.
 */
export async function numberingBacklog(bench: BenchContext): Promise<ScenarioResult> {
  registerTypeParsers();
  const url = await bench.db.createDatabase(`${bench.db.name}_numbering`);
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'inventory-bench' });
  pool.on('error', () => undefined);
  try {
    await migrate(pool, quietLogger());
    step(`scenario 19: filling ${formatNumber(BACKLOG)} unnumbered events`);
    await fillUnnumberedBacklog(pool, BACKLOG);
    step('scenario 19: numbering them');
    const events = new pg.Pool({ connectionString: url, max: 2, application_name: 'inventory-bench-sequencer' });
    const signal = new FeedSignal();
    const started = performance.now();
    const sequencer = new Sequencer(events, signal, quietLogger(), 1_000_000);
    await signal.waitBeyond(BACKLOG - 1, 30 * 60_000);
    const seconds = (performance.now() - started) / 1000;
    await sequencer.stop();
    await events.end();
    await restoreAutovacuum(pool);
    const perSecond = BACKLOG / seconds;
    return {
      id: 19,
      title: `numbering a ${formatNumber(BACKLOG)}-event backlog`,
      service: {
        label: 'the Sequencer, statistics from an empty default part',
        throughput: perSecond,
        unit: 'events/s',
      },
      targets: [
        {
          target: `numbered in ≤ ${TARGET_SECONDS} s`,
          actual: `${formatNumber(seconds, 1)} s`,
          met: seconds <= TARGET_SECONDS && signal.head === BACKLOG,
        },
      ],
      details: { backlog: BACKLOG, seconds, head: signal.head },
      notes: [
        `${formatNumber(BACKLOG)} events numbered in ${formatNumber(seconds, 1)} s (${formatNumber(perSecond)}/s).`,
      ],
    };
  } finally {
    await pool.end();
  }
}
