import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { useTestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();

const WRITERS = 8;
const TRANSACTIONS_PER_WRITER = 25;
const KEYS = ['K1', 'K2', 'K3'];

interface FeedEvent {
  id: string;
  resource: { key: string; version: number };
  cursor: string;
}

class Rollback extends Error {}

beforeAll(async () => {
  await ctx.db.pool.query('CREATE TABLE feed_order_counter (key text PRIMARY KEY, version integer NOT NULL)');
  await ctx.db.pool.query('INSERT INTO feed_order_counter SELECT unnest($1::text[]), 0', [KEYS]);
});

/**
 * One change of a resource, as a feature makes it: lock the row, change it, append the event; then hold the
 * transaction open for a while, so transactions commit in another order than they started and wrote their
 * events. One in six rolls back and must leave no event.
 */
async function change(writer: number, round: number): Promise<void> {
  const key = KEYS[(writer + round) % KEYS.length]!;
  await withTransaction(ctx.db.pool, async (tx) => {
    // Another resource first: its events get earlier numbers than a later transaction's, which commits first.
    await appendEvents(tx, [{ type: 'pu.event.changed', key: `W${writer}`, resource: { writer, round } }], 'r');
    await tx.query('SELECT pg_sleep($1)', [Math.random() * 0.05]);
    const { rows } = await tx.query<{ version: number }>(
      'UPDATE feed_order_counter SET version = version + 1 WHERE key = $1 RETURNING version',
      [key],
    );
    await appendEvents(tx, [{ type: 'pu.event.changed', key, resource: { key, version: rows[0]!.version } }], 'r');
    await tx.query('SELECT pg_sleep($1)', [Math.random() * (round % 4 === 0 ? 0.3 : 0.02)]);
    if ((writer + round) % 6 === 0) throw new Rollback();
  }).catch((error: unknown) => {
    if (!(error instanceof Rollback)) throw error;
  });
}

async function follow(cursor: string, until: () => boolean): Promise<{ events: FeedEvent[]; cursor: string }> {
  const events: FeedEvent[] = [];
  let drained = false;
  for (;;) {
    const finished = until();
    const response = await request(ctx.app)
      .get(`/v1/events?after=${cursor}&limit=50&wait=1`)
      .set('Authorization', bearer());
    expect(response.status).toBe(200);
    const page = response.body as { events: FeedEvent[]; next: string };
    events.push(...page.events);
    cursor = page.next;
    // Once the writers are done, one more empty answer after a full wait means the feed has shown everything.
    if (finished && page.events.length === 0) {
      if (drained) return { events, cursor };
      drained = true;
    }
  }
}

describe('the change feed under concurrent writers that commit out of start order (D29)', () => {
  it('shows a reader that follows next every committed event exactly once, each resource in commit order', async () => {
    const startCursor = (
      (await request(ctx.app).get('/v1/events?limit=1000').set('Authorization', bearer())).body as { next: string }
    ).next;
    let writing = true;

    const reader = follow(startCursor, () => !writing);
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        for (let round = 0; round < TRANSACTIONS_PER_WRITER; round++) await change(writer, round);
      }),
    );
    writing = false;
    const { events } = await reader;

    const stored = await ctx.db.pool.query<{ id: string }>(
      `SELECT id FROM event_outbox WHERE position > $1 ORDER BY position`,
      [Number(startCursor)],
    );
    const seenIds = events.map((event) => event.id);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    expect(seenIds).toEqual(stored.rows.map((row) => row.id));
    expect(events.map((event) => Number(event.cursor))).toEqual(
      [...events.map((event) => Number(event.cursor))].sort((a, b) => a - b),
    );
    for (const key of KEYS) {
      const versions = events.filter((event) => event.resource.key === key).map((event) => event.resource.version);
      const committed = await ctx.db.pool.query<{ version: number }>(
        'SELECT version FROM feed_order_counter WHERE key = $1',
        [key],
      );
      expect(versions).toEqual(Array.from({ length: committed.rows[0]!.version }, (_, index) => index + 1));
    }
    const rolledBack = WRITERS * TRANSACTIONS_PER_WRITER - events.length / 2;
    expect(rolledBack).toBeGreaterThan(0);
  }, 120_000);
});
