import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { useTestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';
import { openStream, type Stream } from './sse-client.js';

/**
 * D39: the database work per commit does not grow with the open streams. Statements are counted on the pool the
 * app reads from (the instance's numbering and relay run on a pool of their own, the same with or without streams)
 * over 100 commits: with no stream, with 50 and with 500. Before D39 every stream read its own page per commit.
 */
const COMMITS = 100;
const ctx = useTestApp({ EVENT_STREAMS_HEARTBEAT_MS: '600000' });
let server: http.Server;
let statements = 0;
let writers: pg.Pool;

beforeAll(async () => {
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const pool = ctx.db.pool as unknown as { query: (...args: unknown[]) => unknown };
  const query = pool.query.bind(pool);
  pool.query = (...args: unknown[]) => {
    statements++;
    return query(...args);
  };
  writers = new pg.Pool({ connectionString: ctx.db.url, max: 1 });
});

afterAll(async () => {
  await writers.end();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The feed's head once every committed event is numbered, read on the uncounted pool. */
async function numberedHead(): Promise<number> {
  for (;;) {
    const { rows } = await writers.query<{ head: string; pending: boolean }>(
      `SELECT (SELECT sequenced_through FROM event_feed_state WHERE id = 1) AS head,
              EXISTS (SELECT 1 FROM event_outbox WHERE position IS NULL) AS pending`,
    );
    if (!rows[0]!.pending) return Number(rows[0]!.head);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Commits COMMITS events one by one on a client of its own (not counted), waits until every stream has seen the last,
 * and answers the statements the app ran on its pool meanwhile.
 */
async function commitAndCount(streams: readonly Stream[]): Promise<number> {
  const before = statements;
  for (let i = 0; i < COMMITS; i++) {
    await withTransaction(writers, (tx) =>
      appendEvents(tx, [{ type: 'product.event.updated', key: randomUUID(), resource: { sku: `C-${i}` } }], 'c'),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const through = String(await numberedHead());
  for (const stream of streams) await stream.until(() => stream.lastEventId() === through, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return statements - before;
}

async function openStreams(count: number): Promise<Stream[]> {
  const streams: Stream[] = [];
  for (let i = 0; i < count; i++) {
    const stream = await openStream(server, i % 2 === 0 ? '' : '?sku=C-7', { Authorization: bearer() });
    streams.push(stream);
  }
  await Promise.all(streams.map((stream) => stream.until((blocks) => blocks.length > 0)));
  return streams;
}

describe('statements per commit with open event streams (D39)', () => {
  it('runs the same statements for 100 commits with 0, 50 and 500 open streams, give or take a constant', async () => {
    const withNone = await commitAndCount([]);
    const fifty = await openStreams(50);
    const withFifty = await commitAndCount(fifty);
    const more = await openStreams(450);
    const withFiveHundred = await commitAndCount([...fifty, ...more]);
    for (const stream of [...fifty, ...more]) stream.close();

    // eslint-disable-next-line no-console -- the figures go to docs/decisions.md D39
    console.log(`statements over ${COMMITS} commits: ${withNone}, ${withFifty}, ${withFiveHundred}`);
    // The instance's one reader reads at most once per commit; the streams read nothing themselves.
    expect(withFifty - withNone).toBeLessThanOrEqual(COMMITS + 10);
    expect(Math.abs(withFiveHundred - withFifty)).toBeLessThanOrEqual(COMMITS / 2);
  }, 120_000);
});
