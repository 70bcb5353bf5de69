import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { FeedSignal } from '../../src/events/feed-signal.js';
import { MAX_EVENTS_PER_RUN, Sequencer } from '../../src/events/sequencer.js';
import { numberingStatements } from '../../src/events/sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fillUnnumberedBacklog, restoreAutovacuum } from '../support/unnumbered-backlog.js';

/**
 * D39: numbering keeps up with bulk loads whatever the statistics say. npm test numbers 50,000; the size
 * runs with NUMBERING_BACKLOG_EVENTS=1000000 (and as bench scenario 19).
 */
const BACKLOG = Number(process.env.NUMBERING_BACKLOG_EVENTS ?? 50_000);
// Generous: what is asserted is that the backlog is numbered, not how fast (bench scenario 19 reports that).
const NUMBERED_WITHIN_MS = 120_000 + BACKLOG / 5;

let db: TestDatabase;

beforeAll(async () => {
  registerTypeParsers();
  db = await createTestDatabase();
}, 120_000);

afterAll(() => db.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): string[] {
  return [`${node['Node Type']} ${node['Relation Name'] ?? ''}`.trim(), ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** The numbering run's plan for `limit` events, planned as the run plans it (its settings included). */
async function numberingPlan(limit: number): Promise<string[]> {
  const { lock, numbering } = numberingStatements(limit);
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(lock);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${numbering}`);
    return nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('numbering a backlog with stale statistics (D39)', () => {
  it(`numbers ${BACKLOG.toLocaleString('en-US')} events gaplessly in insertion order, a later write after them, and vacuums the dead rows it leaves`, async () => {
    await fillUnnumberedBacklog(db.pool, BACKLOG);
    const { rows: stale } = await db.pool.query<{ reltuples: number }>(
      `SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'event_outbox_unnumbered'`,
    );
    expect(stale[0]!.reltuples).toBeLessThan(BACKLOG / 100);

    const plan = await numberingPlan(5000);
    expect(plan.filter((node) => /^(Sort|Seq Scan|Bitmap|Hash|Merge|Materialize)/.test(node))).toEqual([]);

    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const signal = new FeedSignal();
    const started = performance.now();
    const sequencer = new Sequencer(pool, signal, pino({ level: 'silent' }), 1_000_000);
    try {
      await signal.waitBeyond(BACKLOG - 1, NUMBERED_WITHIN_MS);
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(`numbered ${BACKLOG} events in ${seconds.toFixed(1)} s\n`);
      expect(signal.head).toBe(BACKLOG);

      const { rows: later } = await db.pool.query<{ seq: number }>(
        `INSERT INTO event_outbox (type, resource_key, resource) VALUES ('pu.event.moved', 'LATER', '{}') RETURNING seq`,
      );
      await signal.waitBeyond(BACKLOG, 10_000);

      expect(await numberedOutbox(db.pool)).toEqual(gaplessInSeqOrder(BACKLOG + 1));
      const { rows: last } = await db.pool.query<{ position: number }>(
        'SELECT position FROM event_outbox WHERE seq = $1',
        [later[0]!.seq],
      );
      expect(last[0]!.position).toBe(BACKLOG + 1);

      // The dead rows numbering left in the default part are vacuumed by the sequencer (autovacuum is off for it
      // here). Whether VACUUM can remove them also depends on snapshots elsewhere on the server, so that is not
      // asserted: a shared server's other sessions held them back in one run.
      await vi.waitFor(
        async () => {
          const { rows: stats } = await db.pool.query<{ vacuumed: boolean }>(
            `SELECT last_vacuum IS NOT NULL AS vacuumed FROM pg_stat_user_tables WHERE relname = 'event_outbox_unnumbered'`,
          );
          expect(stats[0]!.vacuumed).toBe(true);
        },
        { timeout: 60_000, interval: 250 },
      );
      const { rows: boundaries } = await db.pool.query<{ position: number }>(
        'SELECT max(position) AS position FROM feed_boundary',
      );
      expect(boundaries[0]!.position).toBe(BACKLOG + 1);
    } finally {
      await sequencer.stop();
      await pool.end();
      await restoreAutovacuum(db.pool);
    }
  }, 600_000);
});

/** Every event of the outbox: how many, their distinct positions, the lowest and highest, in seq order by position. */
async function numberedOutbox(pool: pg.Pool): Promise<unknown> {
  const { rows } = await pool.query(
    `SELECT count(*) AS count, count(DISTINCT position) AS distinct, min(position) AS min, max(position) AS max,
            bool_and(prev_seq IS NULL OR prev_seq < seq) AS ordered
       FROM (SELECT position, seq, lag(seq) OVER (ORDER BY position) AS prev_seq FROM event_outbox) e`,
  );
  return rows[0];
}

/** What numberedOutbox answers when `events` are numbered 1 … `events` in the order they were written. */
function gaplessInSeqOrder(events: number): unknown {
  return { count: events, distinct: events, min: 1, max: events, ordered: true };
}

/**
 * A database of its own for the describe block that calls it: these tests number from position 1, or need a
 * sequencer that never ran on the shared one.
 */
function freshDatabase(): () => TestDatabase {
  let fresh: TestDatabase | undefined;
  beforeAll(async () => {
    fresh = await createTestDatabase();
  }, 120_000);
  afterAll(() => fresh?.drop());
  return () => fresh!;
}

describe('numbering a bulk load that comes after the sequencer has run on an almost empty outbox', () => {
  const fresh = freshDatabase();

  // Its statements were prepared and run while the default part held nothing: after five runs PostgreSQL may keep
  // a generic plan made from that size, which rescanned the run's events for every event of the backlog (a
  // 200,000-unit intake's first run of 5,000 took 118 s; 20,000 events were not numbered in 115 s).
  it('numbers 20,000 events written in one transaction within 30 s, gaplessly in insertion order', async () => {
    const backlog = 20_000;
    await fillUnnumberedBacklog(fresh().pool, 0);
    const pool = new pg.Pool({ connectionString: fresh().url, max: 2 });
    const signal = new FeedSignal();
    const sequencer = new Sequencer(pool, signal, pino({ level: 'silent' }), 1_000_000);
    try {
      for (let event = 1; event <= 8; event++) {
        await fresh().pool.query(
          `INSERT INTO event_outbox (type, resource_key, resource) VALUES ('pu.event.moved', 'EARLY', '{}')`,
        );
        await signal.waitBeyond(event - 1, 10_000);
        expect(signal.head).toBe(event);
      }

      await fresh().pool.query(
        `INSERT INTO event_outbox (type, resource_key, resource)
         SELECT 'pu.event.created', 'BULK-' || n, json_build_object('n', n) FROM generate_series(1, $1::int) n`,
        [backlog],
      );
      await signal.waitBeyond(8 + backlog - 1, 30_000);
      expect(signal.head).toBe(8 + backlog);

      expect(await numberedOutbox(fresh().pool)).toEqual(gaplessInSeqOrder(8 + backlog));
    } finally {
      await sequencer.stop();
      await pool.end();
      await restoreAutovacuum(fresh().pool);
    }
  }, 120_000);
});

describe('parts for the next positions', () => {
  const fresh = freshDatabase();

  // Creating a part scans the default part: made at the first run after a bulk load it scanned every event of
  // that load before numbering any (3.5 s after a 1,000,000-unit intake).
  it('are made once a run has numbered, not left to the first run after the next bulk load', async () => {
    const pool = new pg.Pool({ connectionString: fresh().url, max: 2 });
    const signal = new FeedSignal();
    // Parts of 1,000 positions, made 20,000 (the largest run's events) ahead of the head: p1 … p19001 at the start.
    const sequencer = new Sequencer(pool, signal, pino({ level: 'silent' }), 1000);
    try {
      await fresh().pool.query(
        `INSERT INTO event_outbox (type, resource_key, resource)
         SELECT 'pu.event.created', 'BULK-' || n, '{}' FROM generate_series(1, 1001) n`,
      );
      await signal.waitBeyond(1000, 30_000);
      expect(signal.head).toBe(1001);

      await vi.waitFor(
        async () => {
          const { rows } = await fresh().pool.query<{ made: boolean }>(
            `SELECT to_regclass('event_outbox_p21001') IS NOT NULL AS made`,
          );
          expect(rows[0]!.made).toBe(true);
        },
        { timeout: 3000, interval: 100 },
      );
    } finally {
      await sequencer.stop();
      await pool.end();
    }
  }, 60_000);
});

describe('numbering a backlog in runs', () => {
  const fresh = freshDatabase();

  // Each run waits four times for the service's event loop, which a bulk load's events keep busy for the streams.
  it('doubles the next run after each full one, up to the largest run, and numbers the backlog gaplessly', async () => {
    await fillUnnumberedBacklog(fresh().pool, 50_000);
    const pool = new pg.Pool({ connectionString: fresh().url, max: 2 });
    const signal = new FeedSignal();
    const heads: number[] = [];
    signal.onAdvance((head) => heads.push(head));
    const sequencer = new Sequencer(pool, signal, pino({ level: 'silent' }), 1_000_000);
    try {
      await signal.waitBeyond(49_999, 60_000);
      expect(MAX_EVENTS_PER_RUN).toBe(20_000);
      expect(heads).toEqual([5000, 15_000, 35_000, 50_000]);
      expect(await numberedOutbox(fresh().pool)).toEqual(gaplessInSeqOrder(50_000));
    } finally {
      await sequencer.stop();
      await pool.end();
      await restoreAutovacuum(fresh().pool);
    }
  }, 120_000);
});

describe('parts during a backlog', () => {
  const fresh = freshDatabase();

  // Creating a part scans the default part, which holds the rest of the backlog then, and locks numbering and every
  // writer of events out meanwhile. Observed through a reader that keeps the default part from that lock: each try
  // to create a part then fails after 20 ms and is logged.
  it('are not made while the parts ahead hold the next run, and are made once the backlog is numbered', async () => {
    const pool = new pg.Pool({ connectionString: fresh().url, max: 2 });
    const signal = new FeedSignal();
    const logged: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logged.push(line) });
    const sequencer = new Sequencer(pool, signal, logger, 1000);
    const reader = await fresh().pool.connect();
    const partsFailed = (): string[] => logged.filter((line) => line.includes('creating the next parts'));
    try {
      // After a run, parts of 1,000 positions for the largest run's 20,000 past the head: p1 … p20001.
      await fresh().pool.query(
        `INSERT INTO event_outbox (type, resource_key, resource) VALUES ('pu.event.moved', 'FIRST', '{}')`,
      );
      await signal.waitBeyond(0, 10_000);
      await vi.waitFor(
        async () => {
          const { rows } = await fresh().pool.query<{ made: boolean }>(
            `SELECT to_regclass('event_outbox_p20001') IS NOT NULL AS made`,
          );
          expect(rows[0]!.made).toBe(true);
        },
        { timeout: 10_000, interval: 100 },
      );
      await reader.query('BEGIN');
      await reader.query('LOCK TABLE event_outbox_unnumbered IN ACCESS SHARE MODE');
      // A run of 5,000 and one of 10,000 that is not full: both fit in the parts made.
      await fresh().pool.query(
        `INSERT INTO event_outbox (type, resource_key, resource)
         SELECT 'pu.event.created', 'BULK-' || n, '{}' FROM generate_series(1, 14000) n`,
      );
      await signal.waitBeyond(14_000, 30_000);
      expect(signal.head).toBe(14_001);
      expect(partsFailed()).toEqual([]);

      await vi.waitFor(() => expect(partsFailed()).not.toEqual([]), { timeout: 5000, interval: 50 });
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
      await sequencer.stop();
      await pool.end();
    }
  }, 120_000);
});
