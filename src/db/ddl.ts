import { setTimeout as delay } from 'node:timers/promises';
import type { Tx } from './tx.js';

/**
 * DDL on a table that requests write (creating or dropping a part of it) waits for every transaction using the table,
 * and every new one waits behind it. Bounded to 200 ms here, so no request is held up for longer; the caller tries
 * again later.
 */
export async function boundDdlLockWait(tx: Tx): Promise<void> {
  await tx.query(`SET LOCAL lock_timeout = '200ms'`);
}

const LOCK_NOT_AVAILABLE = '55P03';
const UNDEFINED_TABLE = '42P01';
// Each attempt holds writers up for at most the lock wait above; under load a drop may need several before the
// writers in flight let it through.
const DROP_ATTEMPTS = 20;
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
