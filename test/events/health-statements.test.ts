import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { createOutboxParts } from '../../src/events/partitions.js';
import { selectBacklog, sequenceCommittedEvents } from '../../src/events/sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fillUnnumberedBacklog, restoreAutovacuum } from '../support/unnumbered-backlog.js';

/**
 * Issue 37 (D41): `/actuator/health` stays fast after a bulk load (RELIABILITY.md measures it after a
 * 1,000,000-unit intake) because what it asks the database does not grow with the outbox: the probe's `SELECT 1`,
 * and with AMQP_URL the backlog statement, which counts no event: numbered ones by positions, unnumbered ones by the
 * two ends of their `seq` index, and finds the oldest unsent ones by index. Checked on the backlog statement's
 * executed plan, at a size CI affords.
 */
const NUMBERED = 12_000;
const PUBLISHED = 2_000;
const UNNUMBERED = 30_000;
const exchange = 'health-statements';

let db: TestDatabase;

beforeAll(async () => {
  registerTypeParsers();
  db = await createTestDatabase();
  await createOutboxParts(db.pool, 5_000, NUMBERED);
  await fillUnnumberedBacklog(db.pool, NUMBERED);
  await withTransaction(db.pool, (tx) => sequenceCommittedEvents(tx, NUMBERED));
  await db.pool.query('INSERT INTO event_relay_state (exchange, published_through) VALUES ($1, $2)', [
    exchange,
    PUBLISHED,
  ]);
  await fillUnnumberedBacklog(db.pool, UNNUMBERED);
}, 120_000);

afterAll(async () => {
  await restoreAutovacuum(db.pool);
  await db.drop();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

function scansOf(node: PlanNode): PlanNode[] {
  return [...(node['Relation Name'] ? [node] : []), ...(node.Plans ?? []).flatMap(scansOf)];
}

/** The scans of the backlog statement as it executes in health's transaction, its settings and values included. */
async function backlogScans(): Promise<{ type: string; relation: string; rows: number }[]> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const query = vi.spyOn(client, 'query');
    await selectBacklog(client as never, exchange);
    const [settings, backlog] = query.mock.calls.map((call) => call[0] as unknown as pg.QueryConfig);
    query.mockRestore();
    await client.query('ROLLBACK');
    await client.query('BEGIN');
    await client.query(settings!.text);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${backlog!.text}`,
      backlog!.values,
    );
    return scansOf(rows[0]!['QUERY PLAN'][0].Plan).map((node) => ({
      type: node['Node Type'],
      relation: node['Relation Name']!,
      rows: node['Actual Rows'] * node['Actual Loops'],
    }));
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/** The backlog as health reads it. */
function backlog(): Promise<{ count: number }> {
  return withTransaction(db.pool, (tx) => selectBacklog(tx, exchange), { readOnly: true });
}

function expectBounded(scans: { type: string; relation: string; rows: number }[]): void {
  expect([...new Set(scans.map((scan) => scan.relation.replace(/_(p\d+|unnumbered)$/, '')))].sort()).toEqual([
    'event_feed_state',
    'event_outbox',
    'event_relay_state',
  ]);
  const outbox = scans.filter((scan) => scan.relation.startsWith('event_outbox'));
  expect(outbox.filter((scan) => !/^Index (Only )?Scan$/.test(scan.type))).toEqual([]);
  // One row of each scan: the ends of the unnumbered range, the oldest unsent event of each kind.
  expect(outbox.reduce((rows, scan) => rows + scan.rows, 0)).toBeLessThanOrEqual(outbox.length);
}

describe("health's backlog statement after a bulk load (D41)", () => {
  it(`reads one outbox row a scan, by index, with ${UNNUMBERED.toLocaleString('en-US')} events unnumbered and stale statistics`, async () => {
    const { rows } = await db.pool.query<{ reltuples: number }>(
      `SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'event_outbox_unnumbered'`,
    );
    expect(rows[0]!.reltuples).toBeLessThan(UNNUMBERED / 100);
    expectBounded(await backlogScans());
    expect((await backlog()).count).toBe(NUMBERED - PUBLISHED + UNNUMBERED);
  });

  it('reads as little once the statistics know the backlog', async () => {
    await db.pool.query('ANALYZE event_outbox');
    expectBounded(await backlogScans());
    expect((await backlog()).count).toBe(NUMBERED - PUBLISHED + UNNUMBERED);
  });
});
