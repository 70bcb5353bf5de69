import pg from 'pg';
import { boundDdlLockWait } from '../db/ddl.js';
import { withTransaction, type Queryable } from '../db/tx.js';

/**
 * The outbox's parts (migration 0014): each holds the events numbered `from` ≤ position < `to`; unnumbered events
 * wait in the default part `event_outbox_unnumbered`.
 */
export interface OutboxPart {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

const DEFAULT_PART = 'event_outbox_unnumbered';
// Serialises the instances that create parts (two would collide on the same range).
const PARTS_LOCK_KEY = 7_312_029_001;

/** The numbered parts in position order. */
export async function listOutboxParts(db: Queryable): Promise<OutboxPart[]> {
  const result = await db.query<{ name: string; bound: string }>({
    name: 'list-outbox-parts',
    text: `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'event_outbox'::regclass`,
  });
  const parts: OutboxPart[] = [];
  for (const { name, bound } of result.rows) {
    const range = /FROM \('(\d+)'\) TO \('(\d+)'\)/.exec(bound);
    if (range) parts.push({ name, from: Number(range[1]), to: Number(range[2]) });
  }
  return parts.sort((a, b) => a.from - b.from);
}

/**
 * Creates parts past the newest until `headroom` positions past the feed's head have one, each `size` positions
 * wide; answers the position the parts then reach. An event numbered past every part lands in the default part,
 * which stays correct (it is read and pruned there): the next part then starts above it.
 */
export async function createOutboxParts(pool: pg.Pool, size: number, headroom: number): Promise<number> {
  return withTransaction(pool, async (tx) => {
    await boundDdlLockWait(tx);
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [PARTS_LOCK_KEY]);
    const parts = await listOutboxParts(tx);
    const { rows } = await tx.query<{ head: number; strayed: number }>(
      `SELECT (SELECT sequenced_through FROM event_feed_state WHERE id = 1) AS head,
              (SELECT COALESCE(max(position), 0) FROM ${DEFAULT_PART}) AS strayed`,
    );
    const { head, strayed } = rows[0]!;
    let from = Math.max(parts.at(-1)?.to ?? 0, strayed + 1);
    while (from <= head + headroom) {
      await tx.query(
        `CREATE TABLE ${pg.escapeIdentifier(`event_outbox_p${from}`)} PARTITION OF event_outbox
           FOR VALUES FROM (${from}) TO (${from + size})`,
      );
      from += size;
    }
    return from;
  });
}

export interface PrunableBounds {
  prunedThrough: number;
  /** The newest position that may go: numbered, and published when a relay publishes. */
  prunableThrough: number;
}

/** How far events are pruned and how far they may be: never past the head, nor past what the relay published. */
export async function selectPrunableBounds(db: Queryable, relayExchange: string | undefined): Promise<PrunableBounds> {
  const result = await db.query<PrunableBounds>(
    `SELECT s.pruned_through AS "prunedThrough",
            LEAST(s.sequenced_through,
                  CASE WHEN $1::text IS NULL THEN s.sequenced_through
                       ELSE COALESCE((SELECT published_through FROM event_relay_state WHERE exchange = $1),
                                     s.pruned_through) END) AS "prunableThrough"
       FROM event_feed_state s WHERE s.id = 1`,
    [relayExchange ?? null],
  );
  return result.rows[0]!;
}

/** The events numbered in (after, through], and how many of them occurred at or after `cutoff`. */
export async function countEventsBetween(
  db: Queryable,
  after: number,
  through: number,
  cutoff: Date,
): Promise<{ events: number; young: number }> {
  const result = await db.query<{ events: number; young: number }>(
    `SELECT count(*)::int AS events, count(*) FILTER (WHERE occurred_at >= $3)::int AS young
       FROM event_outbox WHERE position > $1 AND position <= $2`,
    [after, through, cutoff],
  );
  return result.rows[0]!;
}

/**
 * Records that the feed starts after `through` (a cursor below is expired). The sequencer's lock is held for
 * this one-row update only.
 */
export async function advancePrunedThrough(pool: pg.Pool, through: number): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query({
      name: 'lock-feed-state-to-prune',
      text: 'SELECT 1 FROM event_feed_state WHERE id = 1 FOR UPDATE',
    });
    await tx.query('UPDATE event_feed_state SET pruned_through = GREATEST(pruned_through, $1) WHERE id = 1', [through]);
  });
}

/**
 * Drops a part wholly at or below `pruned_through`, with the events numbered that far that strayed into the
 * default part. Nothing reads those any more; a drop that times out waiting for its lock is tried at the next prune.
 */
export async function dropOutboxPart(pool: pg.Pool, part: OutboxPart): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await boundDdlLockWait(tx);
    await tx.query(`DROP TABLE ${pg.escapeIdentifier(part.name)}`);
    await tx.query(`DELETE FROM ${DEFAULT_PART} WHERE position < $1`, [part.to]);
  });
}
