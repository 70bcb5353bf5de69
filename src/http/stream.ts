import type { Response } from 'express';
import { stringifyJson } from '../json.js';

/**
 * Rows per page. Measured on 200,000 Products (`selectProductsAfter`, embedded PostgreSQL 17, 2 cores): pages of
 * 500 read them as fast as the former cursor in one transaction (3.2–3.4 s against 3.7–3.8 s), each page query
 * taking 6 ms (p99 13 ms); pages of 100 were 40 % slower, pages of 2,000 no faster and held a connection 25–45 ms.
 */
export const STREAM_PAGE_SIZE = 500;

/**
 * The next page after `after` (undefined: the first), at most `limit` rows in the array's order. It must run as
 * one short statement on a pooled connection and give the connection back before it returns.
 */
export type PageReader<Row> = (after: Row | undefined, limit: number) => Promise<Row[]>;

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
 * Streams rows as one plain JSON array, page by page (keyset paging): each page is a short query whose connection
 * is back in the pool before the page is written, so a slow reader holds no database connection while the service
 * waits for it to drain. Memory stays flat however many rows there are: one page at a time.
 *
 * Unlike one transaction with a cursor, the pages are not one snapshot: a row that exists for the whole transfer
 * comes exactly once, a row created meanwhile comes if its key is beyond the page being read, a deleted row only
 * if its page was read before, a changed row as its page found it.
 */
export async function streamJsonArray<Row>(
  res: Response,
  readPage: PageReader<Row>,
  view: (row: Row) => unknown,
): Promise<void> {
  let after: Row | undefined;
  let separator = '';
  const nextPage = async (): Promise<{ text: string; last: boolean }> => {
    const rows = await readPage(after, STREAM_PAGE_SIZE);
    after = rows.at(-1);
    let text = '';
    for (const row of rows) {
      text += separator + stringifyJson(view(row));
      separator = ',';
    }
    return { text, last: rows.length < STREAM_PAGE_SIZE };
  };
  // Read before the status is sent: a database that fails now still gets its proper 503.
  let page = await nextPage();
  res.status(200).type('application/json');
  let chunk = `[${page.text}`;
  while (!page.last) {
    if (!res.write(chunk)) await drainedOrClosed(res);
    if (res.destroyed) return;
    page = await nextPage();
    chunk = page.text;
  }
  res.end(`${chunk}]`);
}
