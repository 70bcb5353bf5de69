import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aProduct, aQuantity, uniqueSku } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { sleep, waitFor } from '../support/pg-activity.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { givenLocation, givenProduct } from '../support/stock-api.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 1: a streamed import or intake whose client leaves before its answer is rolled back, also once
 * the whole body has arrived and the service is storing it. Against the built service with default settings (the
 * access log at info, to see its 499); the proof is the database's view: no session of the import left, nothing
 * stored, both import slots free.
 */
const RELEASED_WITHIN_MS = 2_000;
/** How long the test waits for the state that must hold, well beyond RELEASED_WITHIN_MS on a busy machine. */
const POLL_BOUND_MS = 15_000;
const GONE_AFTER_LAST_BYTE_MS = 300;
const PRODUCTS = Number(process.env.CLIENT_GONE_PRODUCTS ?? 100_000);
const UNITS = Number(process.env.CLIENT_GONE_UNITS ?? 30_000);

let database: TestDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  service = (await startServicesOnDatabase(database.url, 1, { LOG_LEVEL: 'info' }))[0]!;
}, 180_000);

afterAll(async () => {
  await stopServices([service].filter(Boolean));
  await database?.drop();
}, 60_000);

/** Sends the whole body, then closes the socket 300 ms after its last byte left; answers when it was closed. */
async function sendAndLeave(path: string, body: string): Promise<{ goneAt: Date; answered: boolean }> {
  let answered = false;
  const req = http.request({
    port: service.port,
    host: '127.0.0.1',
    method: 'POST',
    path,
    headers: { Authorization: bearer(), 'Content-Type': 'application/x-ndjson' },
  });
  req.on('response', () => (answered = true));
  req.on('error', () => undefined);
  await new Promise<void>((resolve) => req.end(body, resolve));
  await sleep(GONE_AFTER_LAST_BYTE_MS);
  const goneAt = new Date();
  req.destroy();
  return { goneAt, answered };
}

/** The service's sessions still in a transaction begun before the client left: the import's. */
async function sessionsBegunBefore(moment: Date): Promise<string[]> {
  const { rows } = await database.pool.query<{ what: string }>(
    `SELECT state || ': ' || left(query, 60) AS what FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'inventory-service' AND xact_start < $1`,
    [moment],
  );
  return rows.map((row) => row.what);
}

/** Milliseconds from `goneAt` until no session of the import is left. */
async function releasedAfter(goneAt: Date): Promise<number> {
  await waitFor(
    'no session of the import',
    async () => ((await sessionsBegunBefore(goneAt)).length === 0 ? true : undefined),
    POLL_BOUND_MS,
  );
  return Date.now() - goneAt.getTime();
}

async function count(sql: string, values: unknown[]): Promise<number> {
  return (await database.pool.query<{ n: number }>(sql, values)).rows[0]!.n;
}

/** Both import slots free: two imports at once are both stored. */
async function expectBothSlotsFree(): Promise<void> {
  const prefix = uniqueSku('SLOT');
  const statuses = await Promise.all(
    [0, 1].map(
      (index) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(
            {
              port: service.port,
              host: '127.0.0.1',
              method: 'POST',
              path: '/v1/products',
              headers: { Authorization: bearer(), 'Content-Type': 'application/x-ndjson' },
            },
            (res) => res.resume().on('end', () => resolve(res.statusCode!)),
          );
          req.on('error', reject);
          req.end(`${JSON.stringify(aProduct({ sku: `${prefix}-${index}` }))}\n`);
        }),
    ),
  );
  expect(statuses).toEqual([201, 201]);
}

function accessLogStatuses(path: string): unknown[] {
  return service
    .logEntries()
    .filter((entry) => (entry.req as { url?: string } | undefined)?.url === path && 'responseTime' in entry)
    .map((entry) => (entry.res as { statusCode?: number }).statusCode);
}

function log(message: string): void {
  // eslint-disable-next-line no-console -- the figures of the report
  console.log(message);
}

describe('a streamed load whose client leaves before its answer is rolled back (D38)', () => {
  it(`rolls back an import of ${PRODUCTS} Products whose client leaves 300 ms after the last byte`, async () => {
    const prefix = uniqueSku('GONE');
    const body = Array.from(
      { length: PRODUCTS },
      (_, index) => `${JSON.stringify(aProduct({ sku: `${prefix}-${index}` }))}\n`,
    ).join('');

    const { goneAt, answered } = await sendAndLeave('/v1/products', body);
    const releasedMs = await releasedAfter(goneAt);
    log(`product import of ${PRODUCTS}: client gone, everything released after ${releasedMs} ms`);

    expect(answered).toBe(false);
    expect(releasedMs).toBeLessThan(RELEASED_WITHIN_MS);
    expect(await count('SELECT count(*)::int AS n FROM product WHERE sku LIKE $1', [`${prefix}-%`])).toBe(0);
    await waitFor('the access log line', async () => (accessLogStatuses('/v1/products').length ? true : undefined));
    expect(accessLogStatuses('/v1/products')[0]).toBe(499);
    await expectBothSlotsFree();
  }, 120_000);

  it(`rolls back an intake of ${UNITS} units whose client leaves 300 ms after the last byte`, async () => {
    const sku = await givenProduct(service.baseUrl);
    const { locationId } = await givenLocation(service.baseUrl);
    const line = `${JSON.stringify({ product: { sku }, quantity: aQuantity(1), actualLocation: { locationId } })}\n`;

    const { goneAt, answered } = await sendAndLeave('/v1/packaging-units', line.repeat(UNITS));
    const releasedMs = await releasedAfter(goneAt);
    log(`intake of ${UNITS}: client gone, everything released after ${releasedMs} ms`);

    expect(answered).toBe(false);
    expect(releasedMs).toBeLessThan(RELEASED_WITHIN_MS);
    expect(
      await count(
        'SELECT count(*)::int AS n FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku = $1',
        [sku],
      ),
    ).toBe(0);
    await waitFor('the access log line', async () =>
      accessLogStatuses('/v1/packaging-units').length ? true : undefined,
    );
    expect(accessLogStatuses('/v1/packaging-units')).toEqual([499]);
    await expectBothSlotsFree();
  }, 120_000);
});
