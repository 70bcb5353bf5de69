import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { sleep, waitFor } from '../support/pg-activity.js';
import { givenProduct, STOCK_HOST, uniqueKey } from '../support/stock.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 26, item 3 for the stock intake: it runs in the streamed-import slots and ends as the product import does,
 * when its client stalls or leaves. A short stall bound keeps the test quick; the default is 30 s.
 */
const STALL_MS = 1000;
const FREED_WITHIN_MS = 5000;
const ctx = useTestApp({ IMPORT_STALL_TIMEOUT_MS: String(STALL_MS) });
let server: http.Server;

beforeAll(async () => {
  server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface OpenIntake {
  readonly req: http.ClientRequest;
  /** Status and body, or undefined when the connection ended without an answer. */
  readonly answered: Promise<{ status: number; body: Record<string, unknown> } | undefined>;
}

function openIntake(): OpenIntake {
  const req = http.request({
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
    method: 'POST',
    path: '/v1/packaging-units',
    headers: { Authorization: bearer(), Host: STOCK_HOST, 'Content-Type': 'application/x-ndjson' },
  });
  const answered = new Promise<{ status: number; body: Record<string, unknown> } | undefined>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: JSON.parse(text || '{}') as Record<string, unknown> }),
      );
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
  });
  return { req, answered };
}

const unitLine = (sku: string, bk: string): string =>
  `${JSON.stringify({ transportUnitBK: bk, luPos: '1', loadUnitType: 'BOX', product: { sku }, quantity: aQuantity(1) })}\n`;

/** Sessions inside an intake: in its COPY, or in a transaction not yet ended. */
async function intakeSessions(): Promise<string[]> {
  const { rows } = await ctx.db.pool.query<{ what: string }>(
    `SELECT state || ': ' || query AS what FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND (state <> 'idle' AND query LIKE 'COPY unit_intake%' OR state LIKE 'idle in transaction%')`,
  );
  return rows.map((row) => row.what);
}

async function freedAfter(since: number): Promise<number> {
  await waitFor('no intake session', async () => ((await intakeSessions()).length === 0 ? true : undefined), 30_000);
  return Date.now() - since;
}

async function storedUnitsOf(sku: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku = $1',
    [sku],
  );
  return rows[0]!.n;
}

/** Both import slots (IMPORT_MAX_CONCURRENT) are free: two intakes at once both store. */
async function expectBothSlotsFree(sku: string): Promise<void> {
  const intakes = [openIntake(), openIntake()];
  for (const { req } of intakes) req.end(unitLine(sku, uniqueKey('TU')));
  const answers = await Promise.all(intakes.map(({ answered }) => answered));
  expect(answers).toEqual([
    { status: 201, body: { created: 1 } },
    { status: 201, body: { created: 1 } },
  ]);
}

describe('a stock intake ends when its client or its time does (issue 26)', () => {
  it('answers a chunked intake that stalls after one line with 408 once IMPORT_STALL_TIMEOUT_MS passes, storing nothing', async () => {
    const sku = (await givenProduct(ctx)).sku;
    const stalled = openIntake();
    stalled.req.write(unitLine(sku, uniqueKey('TU')));
    await waitFor('the intake in its COPY', async () =>
      (await intakeSessions()).some((what) => what.includes('COPY')) ? true : undefined,
    );
    const since = Date.now();

    const answer = await stalled.answered;
    const freedMs = await freedAfter(since);

    expect(answer).toEqual({
      status: 408,
      body: {
        timestamp: expect.any(Number),
        status: 408,
        error: 'Request Timeout',
        exception: 'RequestTimeoutException',
        // D38: the time since the last byte, at least the bound.
        message: expect.stringMatching(
          new RegExp(`^The client sent nothing for \\d+ ms, more than IMPORT_STALL_TIMEOUT_MS \\(${STALL_MS}\\)$`),
        ),
        path: '/v1/packaging-units',
      },
    });
    expect(freedMs).toBeLessThan(STALL_MS + FREED_WITHIN_MS);
    expect(await storedUnitsOf(sku)).toBe(0);
    stalled.req.destroy();
    await expectBothSlotsFree(sku);
    expect(await storedUnitsOf(sku)).toBe(2);
  }, 60_000);

  it('frees its COPY, transaction and slot within seconds when the client disconnects mid-body, storing nothing', async () => {
    const sku = (await givenProduct(ctx)).sku;
    const gone = openIntake();
    gone.req.write(Array.from({ length: 100 }, () => unitLine(sku, uniqueKey('TU'))).join(''));
    await waitFor('the intake in its COPY', async () =>
      (await intakeSessions()).some((what) => what.includes('COPY')) ? true : undefined,
    );
    await sleep(200);
    const since = Date.now();
    gone.req.destroy();

    const freedMs = await freedAfter(since);

    expect(await gone.answered).toBeUndefined();
    expect(freedMs).toBeLessThan(FREED_WITHIN_MS);
    expect(await storedUnitsOf(sku)).toBe(0);
    await expectBothSlotsFree(sku);
  }, 60_000);
});
