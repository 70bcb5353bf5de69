import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { listOutboxParts } from '../../src/events/partitions.js';
import { pruneOutbox } from '../../src/events/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fillOldEvents } from '../support/old-events.js';

/** D34: a part whose drop keeps timing out (a long reader holds it) stays until a later prune, losing nothing. */
const PART_SIZE = 1000;

describe('pruning a part that a long transaction keeps from being dropped (D34)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    // As the service reads positions: numbers, not strings.
    registerTypeParsers();
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  async function feedStart(): Promise<number> {
    const { rows } = await db.pool.query<{ prunedThrough: number }>(
      'SELECT pruned_through::int AS "prunedThrough" FROM event_feed_state WHERE id = 1',
    );
    return rows[0]!.prunedThrough;
  }

  it('moves the feed past the part, keeps the part and the newer ones, and drops them all at the next prune', async () => {
    const head = await fillOldEvents(db.pool, { count: 2 * PART_SIZE, ageHours: 48, partitionSize: PART_SIZE });
    const parts = await listOutboxParts(db.pool);
    const oldest = parts.find((part) => part.from === head + 1)!;
    expect(oldest).toBeDefined();
    const reader: pg.PoolClient = await db.pool.connect();
    let first: number;
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${oldest.name}`);
      first = await pruneOutbox(db.pool, new Date(Date.now() - 24 * 3_600_000), undefined);
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
    }
    const partsAfterFirst = (await listOutboxParts(db.pool)).map((part) => part.name);
    const startAfterFirst = await feedStart();

    const second = await pruneOutbox(db.pool, new Date(Date.now() - 24 * 3_600_000), undefined);

    // The first prune gave up on the locked part after its retries: the feed starts after it all the same (nothing
    // reads it any more), and it stopped there, so the newer part was left for the next prune too.
    expect(first).toBe(PART_SIZE);
    expect(startAfterFirst).toBe(head + PART_SIZE);
    expect(partsAfterFirst).toContain(oldest.name);
    expect(second).toBe(PART_SIZE);
    expect(await feedStart()).toBe(head + 2 * PART_SIZE);
    expect((await listOutboxParts(db.pool)).every((part) => part.from > head + 2 * PART_SIZE)).toBe(true);
  }, 30_000);
});
