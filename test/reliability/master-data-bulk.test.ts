import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';
import { arrayBody, processMemory, sleep } from './harness.js';

/**
 * Issue 34 item 5 (D38): a large `PUT /v1/location-groups` to the built service with its default settings. Read
 * whole, a 60 MB body stalled /index for 3.2–5.6 s and took RSS to 1.2–1.35 GB; parsed as it arrived but stored from
 * arrays, for 204 s with /index waiting up to 7 s and RSS at 446 MiB. Now its groups are spooled as COPY rows as they
 * are checked and stored from a staging table: the process holds no more than a piece of the body, whatever its size
 * (at 12 MB, stored from arrays it grew by 105 MiB, staged by 44 MiB). The body is the issue's 60 MB
 * (MASTER_DATA_BULK_BYTES sends another size). The peak is the issue's bound for the whole process; the /index bound
 * is generous because CI shares its two cores (at 60 MB on a quiet machine: 11.4 s, worst wait 9 ms, peak 205 MiB;
 * bench scenario 22 has the exact figures).
 */
const BODY_BYTES = Number(process.env.MASTER_DATA_BULK_BYTES ?? 60 * 2 ** 20);
const PEAK_RSS_BOUND = 300 * 2 ** 20;
const WORST_INDEX_WAIT_BOUND_MS = 2000;

let database: TestDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  service = (await startServicesOnDatabase(database.url, 1))[0]!;
}, 180_000);

afterAll(async () => {
  await stopServices(service ? [service] : []);
  await database?.drop();
}, 60_000);

/** Groups of about 100 bytes each, ten children to a parent, as many as fit in `bytes`; generated as sent. */
function locationGroups(bytes: number): { count: number } & ReturnType<typeof arrayBody> {
  const pad = 'x'.repeat(60);
  const item = (index: number): string =>
    `{"name":"LG-${pad}-${index}"${index === 0 ? '' : `,"parent":"LG-${pad}-${Math.floor((index - 1) / 10)}"`}}`;
  let count = 0;
  let length = 2;
  while (length + item(count).length + 1 <= bytes) length += item(count++).length + 1;
  return { count, ...arrayBody(item, count) };
}

function put(body: ReturnType<typeof locationGroups>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${service.baseUrl}/v1/location-groups`, {
      method: 'PUT',
      headers: { Authorization: bearer(), 'Content-Type': 'application/json', 'Content-Length': body.length },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    body.stream().pipe(request);
  });
}

function log(message: string): void {
  // eslint-disable-next-line no-console -- RELIABILITY.md reports these figures
  console.log(message);
}

describe('a large location-group body (issue 34, D38)', () => {
  it('is stored while /index keeps answering, the process staying under 300 MiB', async () => {
    const body = locationGroups(BODY_BYTES);
    const before = await processMemory(service.child.pid, 'VmRSS');
    let running = true;
    const waits: number[] = [];
    const probes = (async () => {
      while (running) {
        const sent = performance.now();
        const response = await fetch(`${service.baseUrl}/index`, { signal: AbortSignal.timeout(60_000) });
        await response.arrayBuffer();
        if (response.status === 200) waits.push(performance.now() - sent);
        await sleep(100);
      }
    })();
    const started = performance.now();

    const status = await put(body);
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await probes;
    const peak = await processMemory(service.child.pid, 'VmHWM');
    const worst = Math.max(...waits);
    log(
      `${body.length} bytes (${body.count} LocationGroups) answered ${status} in ${seconds.toFixed(1)} s; /index ` +
        `${waits.length} answers, worst wait ${worst.toFixed(0)} ms; RSS ${(before / 2 ** 20).toFixed(0)} MiB ` +
        `before, peak ${(peak / 2 ** 20).toFixed(0)} MiB`,
    );

    expect(status).toBe(204);
    const stored = await database.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM location_group WHERE name LIKE 'LG-%' AND parent_id IS NOT NULL",
    );
    expect(stored.rows[0]!.n).toBe(body.count - 1);
    expect(waits.length).toBeGreaterThan(10);
    expect(worst).toBeLessThan(WORST_INDEX_WAIT_BOUND_MS);
    expect(peak).toBeLessThan(PEAK_RSS_BOUND);
  }, 120_000);
});
