import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { listOutboxParts } from '../../src/events/partitions.js';
import { pruneOutbox } from '../../src/events/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fillOldEvents } from '../support/old-events.js';

/**
 * Issue 37 (D41): a long transaction that had read the outbox (a report, pg_dump) made each prune's DROP wait 200 ms
 * for its lock, 20 times over, and every writer queued behind the lock request meanwhile. Each writer here gives up
 * after 50 ms waiting for a lock (its own lock_timeout), so a writer that waits longer behind the prune fails: the
 * bound is measured by PostgreSQL's lock manager, not by a clock on a busy machine.
 */
const PART_SIZE = 1000;
const WRITERS = 4;
const WRITER_LOCK_WAIT = '50ms';
const LOCK_NOT_AVAILABLE = '55P03';

describe('pruning while a long transaction holds a read of the outbox and writers append events (D41)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    registerTypeParsers();
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  /** Appends one event a transaction until `until` resolves; answers the writes done and the lock waits over 50 ms. */
  async function writeUntil(until: Promise<unknown>): Promise<{ writes: number; heldUp: number }> {
    let done = false;
    void until.finally(() => (done = true));
    const outcome = { writes: 0, heldUp: 0 };
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        while (!done) {
          try {
            await withTransaction(db.pool, async (tx) => {
              await tx.query(`SET LOCAL lock_timeout = '${WRITER_LOCK_WAIT}'`);
              const event = { type: 'product.event.created' as const, key: `w${writer}`, resource: { writer } };
              await appendEvents(tx, [event], 'prune-writers');
            });
            outcome.writes++;
          } catch (error) {
            if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
            outcome.heldUp++;
          }
        }
      }),
    );
    return outcome;
  }

  it('holds no writer up for more than 50 ms, keeps the part, and drops it at a prune after the reader ends', async () => {
    const head = await fillOldEvents(db.pool, { count: 2 * PART_SIZE, ageHours: 48, partitionSize: PART_SIZE });
    const oldest = (await listOutboxParts(db.pool)).find((part) => part.from === head + 1)!;
    const cutoff = new Date(Date.now() - 24 * 3_600_000);
    const reader: pg.PoolClient = await db.pool.connect();
    let first: number;
    let writers: { writes: number; heldUp: number };
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM event_outbox');
      const prune = pruneOutbox(db.pool, cutoff, undefined);
      [first, writers] = await Promise.all([prune, writeUntil(prune)]);
      expect((await listOutboxParts(db.pool)).map((part) => part.name)).toContain(oldest.name);
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
    }

    expect(writers.heldUp).toBe(0);
    expect(writers.writes).toBeGreaterThan(0);

    // The reader holds every part: the first prune dropped none (it may have moved the feed's start past some).
    const second = await pruneOutbox(db.pool, cutoff, undefined);
    expect(first + second).toBe(2 * PART_SIZE);
    expect((await listOutboxParts(db.pool)).every((part) => part.from > head + 2 * PART_SIZE)).toBe(true);
  }, 30_000);
});
