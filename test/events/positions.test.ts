import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { numberingStatements, selectEventsAfter, selectFeedPage } from '../../src/events/sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(() => db.drop());

// Far above any position the sequencer assigns in a test database.
const POSITION = 9_000_000_000_000;
// The unique index on positions is enforced part by part, as the index of the part the position falls in; the
// position decides the part, so no position can be in two parts.
const POSITION_INDEX = /^event_outbox_\w+_position_idx$/;

/** Runs `work` on one connection in a transaction that is rolled back: nothing stays in the outbox. */
async function inRolledBackTransaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

async function insertEvent(client: pg.PoolClient, position: number | null): Promise<number> {
  const { rows } = await client.query<{ seq: number }>(
    `INSERT INTO event_outbox (type, resource_key, resource, position) VALUES ('pu.event.changed', 'K', '{}', $1)
     RETURNING seq`,
    [position],
  );
  return rows[0]!.seq;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The outbox's parts (migration 0014) a plan reads. */
function outboxPartsRead(node: PlanNode): string[] {
  const own = node['Relation Name']?.startsWith('event_outbox_') ? [node['Relation Name']] : [];
  return [...own, ...(node.Plans ?? []).flatMap(outboxPartsRead)];
}

/** The scans of the outbox's parts (migration 0014) in a plan. */
function outboxScans(node: PlanNode): string[] {
  const own = node['Relation Name']?.startsWith('event_outbox')
    ? [`${node['Node Type']} ${node['Index Name'] ?? ''}`]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap(outboxScans)];
}

/**
 * The plan of a statement as the service runs it: its own text (recorded from the function), prepared and planned
 * generically, as a named statement is after a few executions. Sequential scans are disabled, so the test database's few rows do not make a scan cheaper: what is asserted is that the
 * index can serve the query.
 */
async function genericPlanOf(
  client: pg.PoolClient,
  read: (db: pg.PoolClient) => Promise<unknown>,
  args: string,
): Promise<PlanNode> {
  const query = vi.spyOn(client, 'query');
  await read(client);
  const { text } = query.mock.calls[0]![0] as unknown as pg.QueryConfig;
  query.mockRestore();
  await client.query('SET LOCAL enable_seqscan = off');
  await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
  await client.query(`PREPARE reader AS ${text}`);
  const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) EXECUTE reader(${args})`,
  );
  await client.query('DEALLOCATE reader');
  return rows[0]!['QUERY PLAN'][0].Plan;
}

describe('event positions (D29)', () => {
  it('refuses a second event with a position already given', async () => {
    await inRolledBackTransaction(async (client) => {
      await insertEvent(client, POSITION);

      await expect(insertEvent(client, POSITION)).rejects.toMatchObject({
        code: '23505',
        constraint: expect.stringMatching(POSITION_INDEX),
      });
    });
  });

  it('refuses to number an event with a position another event has', async () => {
    await inRolledBackTransaction(async (client) => {
      await insertEvent(client, POSITION);
      const unnumbered = await insertEvent(client, null);

      await expect(
        client.query('UPDATE event_outbox SET position = $1 WHERE seq = $2', [POSITION, unnumbered]),
      ).rejects.toMatchObject({ code: '23505', constraint: expect.stringMatching(POSITION_INDEX) });
    });
  });

  it('keeps any number of events not yet numbered', async () => {
    await inRolledBackTransaction(async (client) => {
      const seqs = [await insertEvent(client, null), await insertEvent(client, null)];

      const { rows } = await client.query<{ unnumbered: number }>(
        'SELECT count(*)::int AS unnumbered FROM event_outbox WHERE position IS NULL AND seq = ANY($1)',
        [seqs],
      );
      expect(rows[0]!.unnumbered).toBe(2);
    });
  });

  it('reads the feed page and the relay batch through the index of numbered positions of each part', async () => {
    await inRolledBackTransaction(async (client) => {
      await client.query('CREATE TABLE event_outbox_p_plan PARTITION OF event_outbox FOR VALUES FROM (1) TO (1001)');

      for (const plan of [
        await genericPlanOf(client, (reader) => selectFeedPage(reader, 5, 100), '5, 100'),
        await genericPlanOf(client, (reader) => selectEventsAfter(reader, 5, 100), '5, 100'),
      ]) {
        const scans = outboxScans(plan);
        expect(scans).toContain('Index Scan event_outbox_p_plan_position_idx');
        expect(scans.filter((scan) => !/^Index Scan event_outbox_\w+_position_idx$/.test(scan))).toEqual([]);
      }
    });
  });

  it('builds a numbering run only for a whole, positive count of events: the count is written into its text', () => {
    for (const limit of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => numberingStatements(limit)).toThrow(RangeError);
    }
    expect(numberingStatements(7).numbering).toContain('LIMIT 7)');
  });

  it('numbers new events reading only the part of those not yet numbered, however many parts are kept', async () => {
    await inRolledBackTransaction(async (client) => {
      await client.query('CREATE TABLE event_outbox_p_plan PARTITION OF event_outbox FOR VALUES FROM (1) TO (1001)');
      await insertEvent(client, null);

      const { lock, numbering } = numberingStatements(100);
      await client.query(lock);
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${numbering}`);
      const plan = rows[0]!['QUERY PLAN'][0].Plan;

      expect(new Set(outboxPartsRead(plan))).toEqual(new Set(['event_outbox_unnumbered']));
    });
  });
});
