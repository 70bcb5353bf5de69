import type pg from 'pg';
import { abandonConnection } from './abandon.js';
import { isBrokenConnection } from './pg-errors.js';
import { CLIENT_TIMEOUT_MARGIN_MS, transactionLocalSettings } from './pool.js';

declare const transactionBrand: unique symbol;

/** A client inside an open transaction. Only withTransaction creates one. */
export type Tx = pg.PoolClient & { readonly [transactionBrand]: true };

/** Anything that runs a statement: the pool for single reads, a Tx for units of work. */
export type Queryable = pg.Pool | pg.PoolClient;

export interface TransactionOptions {
  readonly isolation?: 'read committed' | 'repeatable read' | 'serializable';
  readonly readOnly?: boolean;
  /** Attempts in total, including the first. */
  readonly maxAttempts?: number;
  /**
   * Aborted when the work is no longer wanted (its client went away, D38): the running statement is cancelled, the
   * connection closed, nothing commits, and the transaction rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
  /**
   * The request's participant (its idempotency claim, `req.transactionParticipant`), passed by the route that opens
   * the request's writing transaction. Passed, not found through an AsyncLocalStorage: in Node 20 one entered once
   * slows every later promise of the process, two to three times for the reading of a streamed body (issue 34).
   */
  readonly participant?: TransactionParticipant;
}

/**
 * Work that must commit or roll back with a request's writing transaction (an idempotency claim). The transaction
 * it is passed to (the option `participant`) calls `onBegin` first and `onCommit` once committed.
 */
export interface TransactionParticipant {
  onBegin(tx: Tx): Promise<void>;
  /** Last work inside the transaction, once the request's own is done (a claim bound to a streamed body's hash). */
  onBeforeCommit?(tx: Tx): Promise<void>;
  onCommit(): void;
}

const commitCallbacks = new WeakMap<pg.PoolClient, (() => void)[]>();

/** Runs `callback` once the transaction has committed; a rollback (or a retried attempt) discards it. */
export function afterCommit(tx: Tx, callback: () => void): void {
  const callbacks = commitCallbacks.get(tx);
  if (callbacks) callbacks.push(callback);
  else commitCallbacks.set(tx, [callback]);
}

/** pg's per-client setting of how long it waits for any statement's answer (the pool's `query_timeout`). */
type ClientTimeouts = { connectionParameters: { query_timeout: number | false | undefined } };

// The client-side limit a client had before allowLongStatements raised it, restored when the transaction ends.
const raisedTimeouts = new WeakMap<pg.PoolClient, number | false | undefined>();

/**
 * Lets the rest of the transaction's statements run for up to `ms` (a bulk load's set-based statements, bound by its
 * request's timeout rather than DB_STATEMENT_TIMEOUT_MS): on the server (`statement_timeout`, local to the
 * transaction) and in the client, whose own limit would otherwise cut them off a little after the pool's.
 */
export async function allowLongStatements(tx: Tx, ms: number): Promise<void> {
  await tx.query(`SELECT set_config('statement_timeout', $1, true)`, [String(ms)]);
  const parameters = (tx as unknown as ClientTimeouts).connectionParameters;
  if (!raisedTimeouts.has(tx)) raisedTimeouts.set(tx, parameters.query_timeout);
  parameters.query_timeout = ms + CLIENT_TIMEOUT_MARGIN_MS;
}

/** Gives the client back the limit it had before allowLongStatements, for the next transaction on it. */
function restoreTimeout(client: pg.PoolClient): void {
  if (!raisedTimeouts.has(client)) return;
  (client as unknown as ClientTimeouts).connectionParameters.query_timeout = raisedTimeouts.get(client);
  raisedTimeouts.delete(client);
}

const SERIALIZATION_FAILURE = '40001';
const DEADLOCK_DETECTED = '40P01';

/** A serialization failure or a deadlock: the statement may succeed when run again (or, on a standby, elsewhere). */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === SERIALIZATION_FAILURE || code === DEADLOCK_DETECTED;
}

function backoff(attempt: number): Promise<void> {
  const base = 5 * 2 ** attempt;
  return new Promise((resolve) => setTimeout(resolve, base + Math.random() * base));
}

/**
 * The work's result, or the signal's reason as soon as it is aborted: work on an abandoned connection (a COPY waiting
 * for its stream) may never settle, and its transaction is over already. A later failure of the work is expected.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  work.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The one place that begins, commits and rolls back. Serialization failures and deadlocks are retried with
 * jittered backoff, so `fn` must be safe to run again (it only talks to the database).
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (tx: Tx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 5;
  const begin = [
    'BEGIN',
    options.isolation ? `ISOLATION LEVEL ${options.isolation.toUpperCase()}` : '',
    options.readOnly ? 'READ ONLY' : '',
  ]
    .filter(Boolean)
    .join(' ');

  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    // A checked-out connection the server ends between statements reports it as an 'error' event, which the pool
    // listens for only while the connection is idle in it; unheard, it would end the process.
    const onConnectionError = (): void => {
      broken = true;
    };
    client.on('error', onConnectionError);
    const participant = options.readOnly ? undefined : options.participant;
    const { signal } = options;
    const abandon = (): void => {
      broken = true;
      abandonConnection(client);
    };
    if (signal?.aborted) abandon();
    else signal?.addEventListener('abort', abandon, { once: true });
    try {
      const localSettings = transactionLocalSettings(client);
      await client.query(localSettings ? `${begin}; ${localSettings}` : begin);
      await participant?.onBegin(client as Tx);
      const result = await untilAborted(fn(client as Tx), signal);
      await participant?.onBeforeCommit?.(client as Tx);
      // Once COMMIT is sent its outcome cannot be taken back: a client leaving after that is too late.
      signal?.removeEventListener('abort', abandon);
      signal?.throwIfAborted();
      await client.query('COMMIT');
      participant?.onCommit();
      for (const callback of commitCallbacks.get(client) ?? []) callback();
      return result;
    } catch (error) {
      if (broken || isBrokenConnection(error)) {
        broken = true;
      } else {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
      }
      if (signal?.aborted) throw signal.reason;
      if (attempt >= maxAttempts || !isRetryable(error)) throw error;
    } finally {
      signal?.removeEventListener('abort', abandon);
      commitCallbacks.delete(client);
      restoreTimeout(client);
      client.off('error', onConnectionError);
      // A client whose rollback failed may be mid-protocol; destroy it rather than hand it to the next request.
      client.release(broken);
    }
    // Waited without a connection: a retry happens under contention, when the pool is needed most.
    await backoff(attempt);
  }
}
