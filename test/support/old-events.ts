import type pg from 'pg';
import { createOutboxParts } from '../../src/events/partitions.js';

const ROWS_PER_STATEMENT = 100_000;

/**
 * Appends `count` events that occurred `ageHours` ago, numbered after the feed's head and, with `exchange`, marked
 * as published to it: an outbox grown over a long time, as retention finds it. Event n (from 1) has the resource
 * key `old-n` and the position head + n, so a test can tell that none was renumbered. Answers the head before.
 */
export async function fillOldEvents(
  pool: pg.Pool,
  options: { count: number; ageHours: number; partitionSize: number; exchange?: string },
): Promise<number> {
  const { count, ageHours, partitionSize, exchange } = options;
  // Parts first, as the sequencer creates them before numbering.
  await createOutboxParts(pool, partitionSize, count);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ head: number }>(
      'SELECT sequenced_through AS head FROM event_feed_state WHERE id = 1 FOR UPDATE',
    );
    const head = rows[0]!.head;
    for (let from = 1; from <= count; from += ROWS_PER_STATEMENT) {
      await client.query(
        `INSERT INTO event_outbox (position, type, resource_key, request_id, occurred_at, resource)
         SELECT $1::bigint + n, 'pu.event.changed', 'old-' || n, 'fill', now() - $4 * interval '1 hour',
                json_build_object('pKey', gen_random_uuid(), 'quantity', json_build_object('amount', n, 'unit', 'PC'))
           FROM generate_series($2::bigint, $3::bigint) AS n`,
        [head, from, Math.min(from + ROWS_PER_STATEMENT - 1, count), ageHours],
      );
    }
    await client.query('UPDATE event_feed_state SET sequenced_through = $1 WHERE id = 1', [head + count]);
    if (exchange) {
      await client.query(
        `INSERT INTO event_relay_state (exchange, published_through) VALUES ($1, $2)
         ON CONFLICT (exchange) DO UPDATE SET published_through = GREATEST(event_relay_state.published_through, $2)`,
        [exchange, head + count],
      );
    }
    await client.query('COMMIT');
    return head;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
