import type pg from 'pg';
import type { Queryable, Tx } from '../db/tx.js';

/** The channel on which a sequencer announces newly numbered events (payload: the newest position). */
export const SEQUENCED_CHANNEL = 'inventory_events';

/** An event as the feed and the relay read it; `resource` is the stored JSON text, never re-encoded. */
export interface StoredEvent {
  position: number;
  id: string;
  type: string;
  resourceKey: string;
  requestId: string | null;
  /** D36: the W3C traceparent of the request that caused the event; null when it was not traced. */
  traceparent: string | null;
  occurredAt: Date;
  resource: string;
}

const EVENT_COLUMNS = `e.position, e.id, e.type, e.resource_key AS "resourceKey", e.request_id AS "requestId",
  e.traceparent, e.occurred_at AS "occurredAt", e.resource::text AS resource`;

/**
 * Plans a numbering run or a backlog reading may not use (see sequenceCommittedEvents): only the ordered index walk
 * remains. Selected with a statement's other columns, they hold for the rest of its transaction.
 *
 * And no generic plan for the backlog reading, which is prepared (named): after five runs PostgreSQL may keep a plan
 * made without the parameters' values and from the default part's size at that moment. A sequencer whose numbering
 * was prepared and started on an empty outbox kept a plan taking the whole default part as the outer side of its
 * join, with the run's `pending` rescanned for each of its rows: after a 200,000-unit intake the first run of 5,000
 * took 118 s (bench/notes.md, "Numbering after an intake"). The numbering is now sent unprepared (see
 * sequenceCommittedEvents), planned each run; a custom plan costs about a millisecond.
 */
const PLANS_OFF = [
  'enable_seqscan',
  'enable_bitmapscan',
  'enable_sort',
  'enable_hashjoin',
  'enable_mergejoin',
  'enable_material',
]
  .map((setting) => `set_config('${setting}', 'off', true)`)
  .concat(`set_config('plan_cache_mode', 'force_custom_plan', true)`)
  .join(', ');

/**
 * Numbers committed events in commit order (positions after the newest one). Why this gives a gapless feed:
 * the row lock taken by the first statement serialises the sequencers of all instances, and the second
 * statement's snapshot is taken once that lock is held, so it sees every transaction that committed before it
 * and none of the ones still running. Those get higher numbers when a later run sees them: a reader past
 * position n never finds a new event at or below n. Within one run, events are numbered in insertion order,
 * which is commit order for two changes of the same resource (the second writer waited for the first's row
 * lock, so it wrote its event after the first committed). `position IS NULL` in the update, though implied by
 * `pending`, lets PostgreSQL read only the default part (migration 0014) instead of every part kept: without it a
 * run's time grew with the events kept (120 ms at 500,000, bench scenario 17).
 *
 * D39: the plan must not depend on the table's statistics, which lag behind a bulk load (a backlog of a million
 * taken for a few rows): sorting or scanning the whole backlog on every run made numbering it quadratic. The run
 * turns off every plan but walking the unnumbered events' index in `seq` order and fetching each by it, so a run
 * costs its own events, whatever the backlog.
 *
 * D40: a run that leaves no committed event unnumbered records a commit boundary (migration 0016): its last
 * position, the instant, and its snapshot, which sees exactly the transactions numbered up to there.
 */
export async function sequenceCommittedEvents(
  db: Queryable,
  limit: number,
): Promise<{ assigned: number; sequencedThrough: number }> {
  const { lock, numbering } = numberingStatements(limit);
  // Both statements in one message: PostgreSQL runs them as one transaction (or within the caller's), each with its
  // own snapshot, so the run is one round trip. As four (BEGIN, the lock, the numbering, COMMIT) each waited for this
  // process's event loop with the feed's lock held: 13–20 % of the samples during the numbering of a 1,000,000-unit
  // intake found the sequencer idle in transaction (bench/notes.md). Unprepared, each run is planned for its own
  // limit and the default part's present size.
  const results = (await db.query(`${lock};\n${numbering}`)) as unknown as pg.QueryResult[];
  const { assigned, sequencedThrough } = results[1]!.rows[0] as { assigned: number; sequencedThrough: number };
  return { assigned, sequencedThrough };
}

/** The two statements of a numbering run of at most `limit` events (see sequenceCommittedEvents). */
export function numberingStatements(limit: number): { lock: string; numbering: string } {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a numbering run of ${limit} events`);
  return {
    lock: `SELECT ${PLANS_OFF} FROM event_feed_state WHERE id = 1 FOR UPDATE`,
    numbering: `WITH pending AS (
             SELECT seq, row_number() OVER (ORDER BY seq) AS n
               FROM event_outbox WHERE position IS NULL ORDER BY seq LIMIT ${limit}),
           assigned AS (
             UPDATE event_outbox e SET position = s.sequenced_through + p.n
               FROM pending p, event_feed_state s
              WHERE s.id = 1 AND e.seq = p.seq AND e.position IS NULL
             RETURNING e.position),
           advanced AS (
             UPDATE event_feed_state SET sequenced_through = (SELECT max(position) FROM assigned)
              WHERE id = 1 AND EXISTS (SELECT 1 FROM assigned)
             RETURNING sequenced_through),
           boundary AS (
             INSERT INTO feed_boundary (position, committed_at, snapshot)
             SELECT sequenced_through, clock_timestamp(), pg_current_snapshot() FROM advanced
              WHERE (SELECT count(*) FROM assigned) < ${limit}
             RETURNING position)
           SELECT (SELECT count(*) FROM assigned)::int AS assigned,
                  COALESCE((SELECT sequenced_through FROM advanced),
                           (SELECT sequenced_through FROM event_feed_state WHERE id = 1)) AS "sequencedThrough",
                  (SELECT pg_notify('${SEQUENCED_CHANNEL}', sequenced_through::text) FROM advanced) AS notified`,
  };
}

/** Removes the dead rows numbering leaves in the default part, so later runs and probes do not step over them. */
export async function vacuumUnnumbered(db: Pick<Queryable, 'query'>): Promise<void> {
  await db.query('VACUUM event_outbox_unnumbered');
}

/**
 * An event as the feed sends it: its Server-Sent Events block (`id:` its position, `event:` its type, `data:` its
 * FeedEvent JSON, a blank line), rendered by the database (see FEED_FRAME).
 */
export interface FramedEvent {
  position: number;
  type: string;
  frame: string;
}

export interface FeedPage {
  prunedThrough: number;
  sequencedThrough: number;
  events: FramedEvent[];
}

/**
 * The event `o` as its SSE block, with the FeedEvent JSON in it as D29 gives it: `id`, `type`, `occurredAt` (UTC to
 * the millisecond, cut as JavaScript's Date cuts it), `requestId`, the resource as stored (never re-encoded, every
 * digit kept) and `cursor`. Rendered here, not in the service: parsing an event's seven columns and joining them again
 * cost the feed reader about 12 µs of this process's CPU per intake event, against 6 µs for the one string and about
 * 2 µs more in the database, and behind a 1,000,000-unit intake the reader fell seconds behind the numbering (issue
 * 33, bench/notes.md). `to_json` escapes text as
 * JSON.stringify does for any text the database can hold; `concat` builds the string once (`||` copies it per part).
 */
const FEED_FRAME = `concat('id: ', o.position, E'\\nevent: ', o.type, E'\\ndata: {"id":"', o.id, '","type":', to_json(o.type),
  ',"occurredAt":"', to_char(o.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  '","requestId":', COALESCE(to_json(o.request_id)::text, 'null'), ',"resource":', o.resource,
  ',"cursor":"', o.position, E'"}\\n\\n')`;

/**
 * The events after `after` in commit order, with the feed's bounds read in the same snapshot.
 *
 * Positions after `pruned_through` are gapless (D29), so the page's events all lie in (after, after + limit]: the
 * range bounds the index scan of each part whatever the plan. Without the upper bound, a part's statistics taken
 * before a bulk load (a few rows where there are a million) made the planner append every part's events after the
 * cursor and sort them for the LIMIT: a page read every numbered event up to the head (525 ms for 1,000 of 103,012
 * behind, bench/notes.md "Numbering after an intake"), and the feed reader behind a bulk load took the CPU that
 * numbering needed. `GREATEST` skips a NULL `after` and an expired one (the page is then the first kept events).
 */
export async function selectFeedPage(db: Queryable, after: number | undefined, limit: number): Promise<FeedPage> {
  const result = await db.query<{ prunedThrough: number; sequencedThrough: number } & Partial<FramedEvent>>({
    name: 'select-feed-page',
    text: `SELECT s.pruned_through AS "prunedThrough", s.sequenced_through AS "sequencedThrough",
                  e.position, e.type, e.frame
             FROM event_feed_state s
             LEFT JOIN LATERAL (
               SELECT o.position, o.type, ${FEED_FRAME} AS frame FROM event_outbox o
                WHERE o.position > COALESCE($1::bigint, s.pruned_through)
                  AND o.position <= GREATEST($1::bigint, s.pruned_through) + $2
                ORDER BY o.position LIMIT $2) e ON true
            WHERE s.id = 1
            ORDER BY e.position`,
    values: [after ?? null, limit],
  });
  const first = result.rows[0]!;
  return {
    prunedThrough: first.prunedThrough,
    sequencedThrough: first.sequencedThrough,
    events: result.rows.filter((row) => row.position !== null) as FramedEvent[],
  };
}

/** The feed's head, and whether committed events wait for a number: a poll that finds none takes no lock. */
export async function selectSequencerProbe(db: Queryable): Promise<{ sequencedThrough: number; pending: boolean }> {
  const result = await db.query<{ sequencedThrough: number; pending: boolean }>({
    name: 'select-sequencer-probe',
    text: `SELECT sequenced_through AS "sequencedThrough",
                  EXISTS (SELECT 1 FROM event_outbox WHERE position IS NULL) AS pending
             FROM event_feed_state WHERE id = 1`,
  });
  return result.rows[0]!;
}

/**
 * Takes or renews the lease to publish to `exchange` for `owner`; answers how far it has been published, or
 * undefined while another instance holds a lease that has not run out.
 */
export async function acquireRelayLease(
  db: Queryable,
  exchange: string,
  owner: string,
  leaseMs: number,
): Promise<number | undefined> {
  const result = await db.query<{ publishedThrough: number }>({
    name: 'acquire-relay-lease',
    text: `INSERT INTO event_relay_state AS r (exchange, published_through, owner, lease_until)
           VALUES ($1, (SELECT pruned_through FROM event_feed_state WHERE id = 1), $2,
                   clock_timestamp() + $3 * interval '1 millisecond')
           ON CONFLICT (exchange) DO UPDATE
             SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
                 published_through = GREATEST(r.published_through, EXCLUDED.published_through)
           WHERE r.owner = EXCLUDED.owner OR r.lease_until IS NULL OR r.lease_until < clock_timestamp()
           RETURNING published_through AS "publishedThrough"`,
    values: [exchange, owner, leaseMs],
  });
  return result.rows[0]?.publishedThrough;
}

/** Gives the lease up at shutdown, so another instance takes over at once. */
export async function releaseRelayLease(db: Queryable, exchange: string, owner: string): Promise<void> {
  await db.query('UPDATE event_relay_state SET lease_until = NULL WHERE exchange = $1 AND owner = $2', [
    exchange,
    owner,
  ]);
}

export async function selectEventsAfter(db: Queryable, after: number, limit: number): Promise<StoredEvent[]> {
  const result = await db.query<StoredEvent>({
    name: 'select-events-after',
    // Bounded as the feed page is (see selectFeedPage): the batch lies in (after, after + limit] past the pruned.
    text: `SELECT ${EVENT_COLUMNS} FROM event_outbox e
            WHERE e.position > $1
              AND e.position <= GREATEST($1::bigint, (SELECT pruned_through FROM event_feed_state WHERE id = 1)) + $2
            ORDER BY e.position LIMIT $2`,
    values: [after, limit],
  });
  return result.rows;
}

/**
 * Records confirmed publishing and renews the lease, only while `owner` still holds it; false when another owner
 * has taken it over.
 */
export async function advancePublished(
  db: Queryable,
  exchange: string,
  owner: string,
  through: number,
  leaseMs: number,
): Promise<boolean> {
  const result = await db.query({
    name: 'advance-published',
    text: `UPDATE event_relay_state
              SET published_through = GREATEST(published_through, $3),
                  lease_until = clock_timestamp() + $4 * interval '1 millisecond'
            WHERE exchange = $1 AND owner = $2`,
    values: [exchange, owner, through, leaseMs],
  });
  return result.rowCount === 1;
}

/** How long a backlog reading may take before it is cancelled (see selectBacklog). */
export const BACKLOG_STATEMENT_MS = 1000;

export interface Backlog {
  /**
   * Events not yet published: numbered past the relay's mark, and the unnumbered ones by the range of their `seq`
   * (see selectBacklog).
   */
  count: number;
  oldestUnsentAt: Date | null;
}

/**
 * What waits in the outbox for `exchange`'s relay, at the same cost whatever the backlog (issue 37): numbered events
 * are counted from positions; unnumbered ones are not counted at all but taken as the range from the lowest to the
 * highest `seq` of the default part, two ends of its index (a count of at most 10,000 of them along that index took
 * 20 ms at the median and 163 ms at most while a backlog of 300,000 was numbered, RELIABILITY.md). The range is
 * exact unless a transaction whose events fall in it rolled back or is still running; then it says more. As
 * numbering does (D39), the transaction allows no plan but the index walks, whatever the statistics say: left to a
 * bulk load's statistics, the planner read the whole index in a bitmap scan or scanned the default part over the
 * dead rows numbering leaves there.
 *
 * The ends of the index step over the entries of transactions still running: while a bulk load's transaction is
 * open, over every event it has written so far (seconds, with a million). The reading then ends after
 * BACKLOG_STATEMENT_MS with an error, and health answers without the backlog instead of waiting.
 */
export async function selectBacklog(tx: Tx, exchange: string): Promise<Backlog> {
  await tx.query({
    name: 'backlog-plans',
    text: `SELECT ${PLANS_OFF}, set_config('statement_timeout', '${BACKLOG_STATEMENT_MS}', true)`,
  });
  const result = await tx.query<Backlog>({
    name: 'select-backlog',
    text: `WITH mark AS (
             SELECT COALESCE((SELECT published_through FROM event_relay_state WHERE exchange = $1),
                             (SELECT pruned_through FROM event_feed_state WHERE id = 1)) AS published_through),
           unnumbered AS (
             SELECT (SELECT seq FROM event_outbox WHERE position IS NULL ORDER BY seq LIMIT 1) AS first,
                    (SELECT seq FROM event_outbox WHERE position IS NULL ORDER BY seq DESC LIMIT 1) AS last)
           SELECT ((SELECT sequenced_through FROM event_feed_state WHERE id = 1) - (SELECT published_through FROM mark)
                   + COALESCE((SELECT last - first + 1 FROM unnumbered), 0))::int AS count,
                  LEAST((SELECT occurred_at FROM event_outbox
                          WHERE position > (SELECT published_through FROM mark) ORDER BY position LIMIT 1),
                        (SELECT occurred_at FROM event_outbox
                          WHERE position IS NULL AND seq = (SELECT first FROM unnumbered)))
                    AS "oldestUnsentAt"`,
    values: [exchange],
  });
  return result.rows[0]!;
}
