import pg from 'pg';
import { boundDdlLockWait } from '../db/ddl.js';
import type { Queryable, Tx } from '../db/tx.js';

/** A month of the ledger (migration 0015): rows with `from` ≤ occurred_at < `to`; the first part has no `from`. */
export interface LedgerPart {
  readonly name: string;
  readonly from: Date | null;
  readonly to: Date;
}

/** The ledger's parts, oldest first. */
export async function listLedgerParts(db: Queryable): Promise<LedgerPart[]> {
  const result = await db.query<LedgerPart>({
    name: 'list-ledger-parts',
    text: `SELECT name, (regexp_match(bound, 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS "from",
                  (regexp_match(bound, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS "to"
             FROM (SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
                     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = 'stock_movement'::regclass) parts
            ORDER BY "to"`,
  });
  return result.rows;
}

/**
 * Creates the months after the newest part up to `monthsAhead` months past the current one (UTC), so a stock change
 * always finds the part of its instant. Several instances may run it at once: the advisory lock lets one create.
 */
export async function createLedgerMonths(tx: Tx, monthsAhead: number): Promise<string[]> {
  await boundDdlLockWait(tx);
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('stock_movement parts'))`);
  const { rows } = await tx.query<{ from: Date; to: Date; name: string }>(
    `SELECT m AS "from", m + interval '1 month' AS "to",
            'stock_movement_' || to_char(m AT TIME ZONE 'UTC', 'YYYY_MM') AS name
       FROM generate_series($1::timestamptz,
                            date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                              + $2 * interval '1 month',
                            interval '1 month') AS m`,
    [(await listLedgerParts(tx)).at(-1)!.to, monthsAhead],
  );
  for (const month of rows) {
    await tx.query(
      `CREATE TABLE ${pg.escapeIdentifier(month.name)} PARTITION OF stock_movement
         FOR VALUES FROM (${pg.escapeLiteral(month.from.toISOString())}) TO (${pg.escapeLiteral(month.to.toISOString())})`,
    );
  }
  return rows.map((month) => month.name);
}

/** The first instant of the month `months` before the current one (UTC): what LEDGER_RETENTION_MONTHS keeps. */
export async function selectRetentionStart(db: Queryable, months: number): Promise<Date> {
  const { rows } = await db.query<{ start: Date }>(
    `SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - $1 * interval '1 month' AS start`,
    [months],
  );
  return rows[0]!.start;
}

/**
 * Drops one month of the ledger and, in the same transaction, records that history is kept from the end of it
 * (the start of the oldest month kept): stock at an earlier instant then answers 410.
 */
export async function dropLedgerPart(tx: Tx, part: LedgerPart): Promise<void> {
  await boundDdlLockWait(tx);
  await tx.query(`DROP TABLE ${pg.escapeIdentifier(part.name)}`);
  // The one row of migration 0010.
  await tx.query('UPDATE ledger_horizon SET kept_since = GREATEST(kept_since, $1)', [part.to]);
}

/** Where the kept ledger begins (migration 0010's one row); null while it is kept from the start. */
export async function selectKeptSince(db: Queryable): Promise<Date | null> {
  const { rows } = await db.query<{ keptSince: Date | null }>('SELECT kept_since AS "keptSince" FROM ledger_horizon');
  return rows[0]?.keptSince ?? null;
}

/**
 * Deletes up to `limit` commit boundaries (D40, migration 0016) older than the kept ledger, keeping the last one
 * before its start: `at=` an instant since then still finds the boundary it stands on. Answers how many.
 */
export async function deleteBoundariesBefore(db: Queryable, keptSince: Date, limit: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM feed_boundary WHERE id IN (
       SELECT id FROM feed_boundary
        WHERE committed_at < (SELECT max(committed_at) FROM feed_boundary WHERE committed_at < $1)
        ORDER BY committed_at LIMIT $2)`,
    [keptSince, limit],
  );
  return result.rowCount ?? 0;
}

/**
 * Deletes up to `limit` reservations that ended (released, expired or issued, D32) before `endedBefore`, with their
 * parts, in one statement; answers how many.
 */
export async function deleteEndedReservations(db: Queryable, endedBefore: Date, limit: number): Promise<number> {
  const result = await db.query(
    `WITH ended AS (
       SELECT reservation_id FROM reservation_life WHERE state <> 'ACTIVE' AND ended_at < $1 LIMIT $2
     ), parts AS (
       DELETE FROM reservation WHERE reservation_id IN (SELECT reservation_id FROM ended)
     )
     DELETE FROM reservation_life WHERE reservation_id IN (SELECT reservation_id FROM ended)`,
    [endedBefore, limit],
  );
  return result.rowCount ?? 0;
}
