import type { Tx } from './tx.js';

/**
 * DDL on a table that requests write (creating or dropping a part of it) waits for every transaction using the table,
 * and every new one waits behind it. Bounded to 200 ms here, so no request is held up for longer; the caller tries
 * again later.
 */
export async function boundDdlLockWait(tx: Tx): Promise<void> {
  await tx.query(`SET LOCAL lock_timeout = '200ms'`);
}
