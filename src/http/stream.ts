import type { Response } from 'express';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { withTransaction } from '../db/tx.js';
import { stringifyJson } from '../json.js';

const BATCH_SIZE = 500;
const MAX_TIMER_MS = 2_147_483_647;

/** Resolves once the response takes more data or the client has gone, and leaves no listener behind. */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}

/**
 * Streams a query's rows as one JSON array, batch by batch from a cursor, waiting for the client to drain
 * between writes: memory stays flat however many rows there are. The query runs in a read-only transaction
 * (one snapshot) without the statement timeout, which would otherwise cut long transfers.
 */
export async function streamJsonArray<Row>(
  pool: pg.Pool,
  res: Response,
  query: (cursorClass: typeof Cursor) => Cursor<Row>,
  view: (row: Row) => unknown,
): Promise<void> {
  await withTransaction(
    pool,
    async (tx) => {
      await tx.query('SET LOCAL statement_timeout = 0');
      // A long transfer is not a hung database: the pool's client-side query timeout does not apply to it.
      const cursor = tx.query(Object.assign(query(Cursor), { query_timeout: MAX_TIMER_MS }));
      try {
        let first = true;
        let clientGone = false;
        res.on('close', () => {
          clientGone = true;
        });
        res.status(200).type('application/json');
        res.write('[');
        for (;;) {
          const rows = await cursor.read(BATCH_SIZE);
          if (rows.length === 0 || clientGone) break;
          let chunk = '';
          for (const row of rows) {
            chunk += (first ? '' : ',') + stringifyJson(view(row));
            first = false;
          }
          if (!res.write(chunk)) await drainedOrClosed(res);
        }
        res.end(']');
      } finally {
        await cursor.close();
      }
    },
    { readOnly: true, maxAttempts: 1 },
  );
}
