import type { Queryable, Tx } from '../db/tx.js';

export interface IdempotencyRecord {
  requestHash: string;
  state: 'pending' | 'done';
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  expired: boolean;
}

export interface ClaimValues {
  readonly subject: string;
  readonly key: string;
  readonly requestHash: string;
  readonly method: string;
  readonly path: string;
  readonly ttlSeconds: number;
}

export async function selectRecord(
  db: Queryable,
  subject: string,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  const result = await db.query<IdempotencyRecord>(
    `SELECT request_hash AS "requestHash", state, status, headers, body, expires_at < now() AS expired
       FROM idempotency_record WHERE subject = $1 AND key = $2`,
    [subject, key],
  );
  return result.rows[0];
}

export async function deleteExpiredRecord(db: Queryable, subject: string, key: string): Promise<void> {
  await db.query('DELETE FROM idempotency_record WHERE subject = $1 AND key = $2 AND expires_at < now()', [
    subject,
    key,
  ]);
}

/**
 * Claims the key inside the request's transaction. A concurrent claim of the same key waits here until the
 * other transaction ends; false when the key is taken.
 */
export async function insertClaim(tx: Tx, claim: ClaimValues): Promise<boolean> {
  const result = await tx.query(
    `INSERT INTO idempotency_record (subject, key, request_hash, method, path, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
     ON CONFLICT (subject, key) DO NOTHING`,
    [claim.subject, claim.key, claim.requestHash, claim.method, claim.path, claim.ttlSeconds],
  );
  return result.rowCount === 1;
}

export async function storeResponse(
  db: Queryable,
  subject: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: string },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_record SET state = 'done', status = $3, headers = $4::json, body = $5
      WHERE subject = $1 AND key = $2`,
    [subject, key, response.status, JSON.stringify(response.headers), response.body],
  );
}

export async function deleteExpiredRecords(db: Queryable): Promise<number> {
  const result = await db.query('DELETE FROM idempotency_record WHERE expires_at < now()');
  return result.rowCount ?? 0;
}

/**
 * Holds the key for the rest of the transaction, on every instance, without waiting: false when another
 * transaction holds it (D38: a streamed request with the same key still running).
 */
export async function tryLockKey(tx: Tx, subject: string, key: string): Promise<boolean> {
  const result = await tx.query<{ locked: boolean }>(
    `SELECT pg_try_advisory_xact_lock(hashtextextended($1 || E'\\n' || $2, 0)) AS locked`,
    [subject, key],
  );
  return result.rows[0]!.locked;
}
