import { columnOf } from '../db/columns.js';
import type { Queryable, Tx } from '../db/tx.js';
import {
  appendEvents,
  EVENTS_PER_STATEMENT,
  eventInsert,
  signalEventsAfterCommit,
  type NewEvent,
} from '../events/outbox.js';

/** Who changed stock, recorded on every ledger row (D5: the token's subject; D6: the request id). */
export interface Actor {
  readonly subject: string;
  readonly requestId: string;
}

export const MOVEMENT_KINDS = [
  'CREATE',
  'MOVE',
  'SPLIT',
  'DELETE',
  'RESERVE',
  'RELEASE',
  'LOCK',
  'UNLOCK',
  'PICK',
  'ISSUE',
  'EXPIRE',
] as const;
export type MovementKind = (typeof MOVEMENT_KINDS)[number];

/** Where stock was or went: a Location, or a LoadUnit by TransportUnit and position. */
export type StockPlace = { locationId: string } | { transportUnitBK: string; loadUnitPosition: string };

/** One stock change of one PackagingUnit; amounts in the kind's smallest unit (PC or MG). */
export interface MovementEntry {
  readonly packagingUnitPKey: string;
  readonly productId: number;
  readonly kind: MovementKind;
  readonly baseCode: 'PC' | 'MG';
  readonly qtyBefore: string;
  readonly qtyAfter: string;
  readonly reservedBefore: string;
  readonly reservedAfter: string;
  readonly from?: StockPlace;
  readonly to?: StockPlace;
  readonly reservationId?: string;
}

export interface MovementRow {
  /** Ascending in commit order within a unit's history: the ledger's page cursor. */
  id: number;
  kind: MovementKind;
  baseCode: 'PC' | 'MG';
  qtyBefore: string;
  qtyAfter: string;
  reservedBefore: string;
  reservedAfter: string;
  from: StockPlace | null;
  to: StockPlace | null;
  reservationId: string | null;
  actor: string;
  requestId: string | null;
  occurredAt: Date;
}

/**
 * The INSERT of a transaction's stock changes with its parameters numbered from `first`, so a statement may
 * do other writes in CTEs before it (one round trip while row locks are held); `actorParameters` names the
 * placeholders of the actor's subject and request id for those writes to reuse.
 */
export function movementInsert(
  entries: readonly MovementEntry[],
  actor: Actor,
  first = 1,
): { text: string; values: unknown[]; actorParameters: { subject: string; requestId: string } } {
  const p = (n: number): string => `$${first + n - 1}`;
  return {
    actorParameters: { subject: p(12), requestId: p(13) },
    text: `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                 reserved_before, reserved_after, from_ref, to_ref, reservation_id, actor, request_id)
     SELECT v.*, ${p(12)}::text, ${p(13)}::text
       FROM unnest(${p(1)}::uuid[], ${p(2)}::bigint[], ${p(3)}::text[], ${p(4)}::text[], ${p(5)}::numeric[],
                   ${p(6)}::numeric[], ${p(7)}::numeric[], ${p(8)}::numeric[], ${p(9)}::json[], ${p(10)}::json[],
                   ${p(11)}::uuid[]) AS v`,
    values: [
      columnOf(entries, 'packagingUnitPKey'),
      columnOf(entries, 'productId'),
      columnOf(entries, 'kind'),
      columnOf(entries, 'baseCode'),
      columnOf(entries, 'qtyBefore'),
      columnOf(entries, 'qtyAfter'),
      columnOf(entries, 'reservedBefore'),
      columnOf(entries, 'reservedAfter'),
      entries.map((entry) => (entry.from ? JSON.stringify(entry.from) : null)),
      entries.map((entry) => (entry.to ? JSON.stringify(entry.to) : null)),
      columnOf(entries, 'reservationId'),
      actor.subject,
      actor.requestId,
    ],
  };
}

/** Appends the rows of one transaction's stock changes in one statement (D24). */
export async function appendMovements(tx: Tx, entries: readonly MovementEntry[], actor: Actor): Promise<void> {
  if (entries.length === 0) return;
  await tx.query({ name: 'append-movements', ...movementInsert(entries, actor) });
}

/**
 * Further writes of a change for the statement that records its ledger rows and events: data-modifying CTEs
 * (`name AS (…), …`) with their parameters numbered from `first`, under a statement name of their own.
 */
export interface AlsoWritten {
  readonly name: string;
  readonly ctes: (first: number) => { text: string; values: unknown[] };
}

/**
 * Records a stock change's ledger rows and its events (D27) in one statement, one round trip less while the
 * change's row locks are held, with `also`'s writes when given. Events beyond what one statement takes follow in
 * statements of their own.
 */
export async function appendMovementsAndEvents(
  tx: Tx,
  entries: readonly MovementEntry[],
  events: readonly NewEvent[],
  actor: Actor,
  also?: AlsoWritten,
): Promise<void> {
  const first = events.slice(0, EVENTS_PER_STATEMENT);
  const ledger = movementInsert(entries, actor);
  const outbox = eventInsert(first, actor.requestId, 1 + ledger.values.length);
  const more = also?.ctes(1 + ledger.values.length + outbox.values.length);
  await tx.query({
    name: also?.name ?? 'append-movements-and-events',
    text: `WITH appended AS (${outbox.text})${more ? `, ${more.text}` : ''} ${ledger.text}`,
    values: [...ledger.values, ...outbox.values, ...(more?.values ?? [])],
  });
  if (first.length > 0) signalEventsAfterCommit(tx);
  await appendEvents(tx, events.slice(EVENTS_PER_STATEMENT), actor.requestId);
}

/** A page of a unit's history, newest first: `limit` rows older than the row `before`, or the newest. */
export async function selectMovements(
  db: Queryable,
  packagingUnitPKey: string,
  page: { limit: number; before?: number },
): Promise<MovementRow[]> {
  const result = await db.query<MovementRow>(
    `SELECT id, kind, base_code AS "baseCode", qty_before::text AS "qtyBefore", qty_after::text AS "qtyAfter",
            reserved_before::text AS "reservedBefore", reserved_after::text AS "reservedAfter",
            from_ref AS "from", to_ref AS "to", reservation_id AS "reservationId", actor, request_id AS "requestId",
            occurred_at AS "occurredAt"
       FROM stock_movement
      WHERE packaging_unit_pkey = $1::uuid AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY id DESC LIMIT $3`,
    [packagingUnitPKey, page.before ?? null, page.limit],
  );
  return result.rows;
}

/** Whether the unit has any history: an empty later page of an existing unit is no 404. */
export async function hasMovements(db: Queryable, packagingUnitPKey: string): Promise<boolean> {
  const result = await db.query('SELECT 1 FROM stock_movement WHERE packaging_unit_pkey = $1::uuid LIMIT 1', [
    packagingUnitPKey,
  ]);
  return result.rowCount !== 0;
}
