import { setTimeout as delay } from 'node:timers/promises';
import type { Tx } from './tx.js';

/**
 * DDL on a table that requests write (creating or dropping a part of it) waits for every transaction using the table,
 * and every new one waits behind it, writers included. Issue 37 (D41): writes must never wait more than 50 ms for a
 * prune, also while a long transaction (a report, pg_dump) holds a read of the table and the DDL cannot get its lock
 * at all; so the DDL gives up after 20 ms and the caller tries again later. (DETACH PARTITION CONCURRENTLY would not
 * hold writers, but the outbox has a default part, which forbids it; the ledger uses the same path for one rule.)
 */
export const DDL_LOCK_WAIT_MS = 20;

export async function boundDdlLockWait(tx: Tx): Promise<void> {
  await tx.query(`SET LOCAL lock_timeout = '${DDL_LOCK_WAIT_MS}ms'`);
}

const LOCK_NOT_AVAILABLE = '55P03';
const UNDEFINED_TABLE = '42P01';
// Each attempt holds writers up for at most the lock wait above; under load a drop may need several before the
// writers in flight let it through. A long reader outlasts them all: the drop is left to the next prune (within
// about a second, instead of the 7.8 s of queued writers the 200 ms waits made).
const DROP_ATTEMPTS = 5;
const DROP_RETRY_MS = 100;

/**
 * Runs `drop` (a transaction that drops a part under `boundDdlLockWait`), trying again a few times when writers keep
 * it from its lock; true once done or when another instance dropped the part first, false when it stays for now.
 */
export async function dropWithRetries(drop: () => Promise<void>): Promise<boolean> {
  for (let attempt = 1; attempt <= DROP_ATTEMPTS; attempt++) {
    try {
      await drop();
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === UNDEFINED_TABLE) return true;
      if (code !== LOCK_NOT_AVAILABLE) throw error;
    }
    await delay(DROP_RETRY_MS + Math.random() * 2 * DROP_RETRY_MS);
  }
  return false;
}
