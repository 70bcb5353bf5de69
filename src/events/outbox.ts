import { EventEmitter } from 'node:events';
import { afterCommit, type Tx } from '../db/tx.js';
import { stringifyJson } from '../json.js';
import { activeTraceparent } from '../tracing/context.js';

/** D27's event types; the last word is the `owms_event_type` header of the published message (D28). */
export type EventType =
  | 'product.event.created'
  | 'product.event.updated'
  | 'product.event.deleted'
  | 'lu.event.created'
  | 'lu.event.changed'
  | 'pu.event.created'
  | 'pu.event.moved'
  | 'pu.event.changed'
  | 'pu.event.deleted'
  | 'allocation.event.reserved'
  | 'allocation.event.released'
  | 'allocation.event.expired'
  | 'allocation.event.picked'
  | 'allocation.event.issued';

/** One changed resource, rendered as `GET` renders it in plain JSON (D27). */
export interface NewEvent {
  readonly type: EventType;
  /** The resource's pKey (a reservation's id): events of one key reach consumers in commit order. */
  readonly key: string;
  readonly resource: Record<string, unknown>;
}

/**
 * Emits `committed` after a transaction that wrote events has committed, so this instance numbers them at once
 * instead of at its next poll (src/events/sequencer.ts).
 */
export const outboxSignal = new EventEmitter().setMaxListeners(0);
const signalCommitted = (): boolean => outboxSignal.emit('committed');

/** After a statement that wrote outbox rows itself: this instance numbers them right after the commit. */
export function signalEventsAfterCommit(tx: Tx): void {
  afterCommit(tx, signalCommitted);
}

// Bounds the size of one statement's JSON text; a bulk of 100,000 Products is 10 statements.
export const EVENTS_PER_STATEMENT = 10_000;

/** A transaction that writes at least this many events is a bulk load: it leaves the outbox's statistics true. */
const BULK_EVENTS = 10_000;

/**
 * D39: a bulk load's last statement before its commit, so numbering plans from statistics that count its events.
 * An ANALYZE taken while the load's transaction is open (autovacuum's, prompted by the load itself) counts its
 * rows as not there, and once vacuumed the default part keeps its pages with nothing in them: either way the
 * statistics then say a million waiting events are none, and the first numbering run after the load walked the
 * whole backlog once per event of the run (118 s after a 1,000,000-unit intake). Run in the load's own
 * transaction, ANALYZE counts the load's rows and its figures commit with them; SKIP_LOCKED leaves the part alone
 * while a vacuum of it runs rather than wait for it with the load's locks held.
 */
export async function countBulkEventsForPlanner(tx: Tx, eventsWritten: number): Promise<void> {
  if (eventsWritten >= BULK_EVENTS) await tx.query('ANALYZE (SKIP_LOCKED) event_outbox_unnumbered');
}

/**
 * The INSERT of events in the order given, with its parameters numbered from `first`, so that a statement may
 * write them with the change they describe (one round trip while the change's row locks are held); the caller
 * then calls `signalEventsAfterCommit`. The resources travel as one JSON array text that `json_array_elements` splits
 * without re-encoding them; types and keys travel as text arrays beside it, because extracting a field from a
 * JSON value makes PostgreSQL decode the whole value, and a resource may hold a `\u0000` it cannot decode.
 * Each event keeps the `traceparent` of the request being handled (D36), null with tracing off.
 */
export function eventInsert(
  events: readonly NewEvent[],
  requestId: string,
  first = 1,
): { text: string; values: unknown[] } {
  const p = (n: number): string => `$${first + n - 1}`;
  return {
    text: `INSERT INTO event_outbox (type, resource_key, request_id, traceparent, resource)
           SELECT type, key, ${p(4)}::text, ${p(5)}::text, resource
             FROM ROWS FROM (unnest(${p(1)}::text[]), unnest(${p(2)}::text[]), json_array_elements(${p(3)}::json))
                  WITH ORDINALITY AS v(type, key, resource, n)
            ORDER BY n`,
    values: [
      events.map((event) => event.type),
      events.map((event) => event.key),
      stringifyJson(events.map((event) => event.resource)),
      requestId,
      activeTraceparent(),
    ],
  };
}

/** Appends the events of a transaction's changes in the order given, in the caller's transaction (D27's outbox). */
export async function appendEvents(tx: Tx, events: readonly NewEvent[], requestId: string): Promise<void> {
  for (let start = 0; start < events.length; start += EVENTS_PER_STATEMENT) {
    const batch = events.slice(start, start + EVENTS_PER_STATEMENT);
    await tx.query({ name: 'append-events', ...eventInsert(batch, requestId) });
  }
  if (events.length > 0) signalEventsAfterCommit(tx);
}
