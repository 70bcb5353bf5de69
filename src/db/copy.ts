import { once } from 'node:events';
import { finished, pipeline } from 'node:stream/promises';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import type { BodyLine } from '../http/body.js';
import type { RowSpool } from './row-spool.js';
import type { Tx } from './tx.js';

/** COPY rows are handed over in pieces of about this many characters, not one small message per row. */
const COPY_PIECE_CHARS = 256 * 1024;

export type CopyValue = string | number | boolean | null | undefined;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One line of COPY's text format: tab-separated, `\N` for NULL, backslash and line breaks escaped. */
export function copyRow(values: readonly CopyValue[]): string {
  let row = '';
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (index > 0) row += '\t';
    row +=
      value === null || value === undefined ? '\\N' : String(value).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!);
  }
  return `${row}\n`;
}

/**
 * A `COPY … FROM STDIN` bounded by `timeoutMs`: pg reads its client-side timeout from the query, and the pool's
 * (DB_STATEMENT_TIMEOUT_MS) would end a long upload.
 */
export function copyFromStdin(statement: string, timeoutMs: number): CopyStreamQuery {
  return Object.assign(copyFrom(statement), { query_timeout: timeoutMs });
}

/** Copies every row of `rows` into `statement` (a COPY FROM STDIN); a retried transaction copies them again. */
export async function copySpool(tx: Tx, statement: string, rows: RowSpool, timeoutMs: number): Promise<void> {
  await pipeline(rows.read(), tx.query(copyFromStdin(statement, timeoutMs)));
}

/**
 * Streams the rows `rowsOf` makes of each line into `statement` (a COPY FROM STDIN) as the lines arrive, in
 * pieces, waiting whenever the database is behind. A line `rowsOf` refuses ends the COPY (CopyFail) and throws.
 */
export async function copyLines(
  tx: Tx,
  statement: string,
  timeoutMs: number,
  lines: AsyncIterable<BodyLine>,
  rowsOf: (line: BodyLine) => string,
): Promise<void> {
  const copy = tx.query(copyFromStdin(statement, timeoutMs));
  // An error of the COPY itself surfaces through `drain` or `finished`; unheard, the event would end the process.
  copy.on('error', () => undefined);
  try {
    let piece = '';
    for await (const line of lines) {
      piece += rowsOf(line);
      if (piece.length >= COPY_PIECE_CHARS) {
        const flowing = copy.write(piece);
        piece = '';
        if (!flowing) await once(copy, 'drain');
      }
    }
    if (piece !== '') copy.write(piece);
    copy.end();
    await finished(copy);
  } catch (error) {
    // CopyFail: the server discards the rows, and the connection is ready for the ROLLBACK once it has answered.
    copy.destroy();
    await finished(copy).catch(() => undefined);
    throw error;
  }
}
