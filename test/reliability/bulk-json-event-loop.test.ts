import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';
import { bulkBodyOfSize, processMemory, sleep } from './harness.js';

/**
 * Issue 26: one JSON bulk body of the largest size (BULK_BODY_LIMIT, 64 MB by default) sent to the built service
 * with its default settings. Read whole, it was parsed and validated in one go: a request to /index every 100 ms
 * waited up to a minute, and the process grew by about 1 GB. Read as it arrives, in pieces that yield to the event
 * loop, with its rows spooled to a file, other requests keep being answered and the process stays small. The bound
 * of peak RSS: 300 MB for the whole process.
 */
const BULK_LIMIT = 64 * 1024 * 1024;
const PEAK_RSS_BOUND = 300 * 1024 * 1024;
const PROBE_EVERY_MS = 100;
const LOOKUP_SKU = 'EVENT-LOOP-LOOKUP';

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

interface Probe {
  readonly status: number;
  /** From sending the request to its whole answer. */
  readonly waitMs: number;
  readonly answeredAt: number;
}

/** Sends GET `path` every PROBE_EVERY_MS, one at a time, until `stop` is called; answers every probe's outcome. */
function probe(path: string): { stop: () => Promise<Probe[]> } {
  const probes: Probe[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const sent = performance.now();
      const response = await fetch(`${service.baseUrl}${path}`, {
        headers: { Authorization: bearer() },
        signal: AbortSignal.timeout(300_000),
      });
      await response.arrayBuffer();
      const answeredAt = performance.now();
      probes.push({ status: response.status, waitMs: answeredAt - sent, answeredAt });
      await sleep(PROBE_EVERY_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return probes;
    },
  };
}

async function post(body: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/v1/products`, {
    method: 'POST',
    headers: { Authorization: bearer(), 'Content-Type': 'application/json' },
    body,
    signal: AbortSignal.timeout(600_000),
  });
  await response.arrayBuffer();
  return response.status;
}

function log(message: string): void {
  // eslint-disable-next-line no-console -- RELIABILITY.md reports these figures
  console.log(message);
}

describe('a JSON bulk body of the largest size (issue 26)', () => {
  it('is created while /index and a Product lookup keep being answered, with peak RSS bounded', async () => {
    expect(
      await post(
        JSON.stringify([
          { sku: LOOKUP_SKU, baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 } },
        ]),
      ),
    ).toBe(201);
    const { text, count } = bulkBodyOfSize('EVENT-LOOP', BULK_LIMIT);
    expect(Buffer.byteLength(text)).toBe(BULK_LIMIT);
    const index = probe('/index');
    const lookup = probe(`/v1/products?sku=${LOOKUP_SKU}`);
    await sleep(1000);
    const sent = performance.now();

    const status = await post(text);
    const answered = performance.now();
    const probes = { index: await index.stop(), lookup: await lookup.stop() };
    const peakRss = await processMemory(service.child.pid, 'VmHWM');

    const during = (list: readonly Probe[]): Probe[] =>
      list.filter((one) => one.answeredAt > sent && one.answeredAt < answered);
    const worst = (list: readonly Probe[]): number => Math.max(...list.map((one) => one.waitMs));
    const bulkMs = answered - sent;
    log(
      `${BULK_LIMIT} bytes (${count} Products) answered ${status} in ${(bulkMs / 1000).toFixed(1)} s; ` +
        `/index answered ${during(probes.index).length} times meanwhile, worst wait ${worst(probes.index).toFixed(0)} ms; ` +
        `lookup ${during(probes.lookup).length} times, worst wait ${worst(probes.lookup).toFixed(0)} ms; ` +
        `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB (bound ${PEAK_RSS_BOUND / 2 ** 20} MiB)`,
    );

    expect(status).toBe(201);
    const stored = await database.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM product WHERE sku LIKE 'EVENT-LOOP-%' AND sku <> $1",
      [LOOKUP_SKU],
    );
    expect(stored.rows[0]!.n).toBe(count);
    for (const list of [probes.index, probes.lookup]) {
      expect(list.filter((one) => one.status !== 200)).toEqual([]);
      // Answered all along: no probe waited for a large part of the bulk, as one did for all of it before.
      expect(during(list).length).toBeGreaterThan(10);
      expect(worst(list)).toBeLessThan(bulkMs / 4);
    }
    expect(peakRss).toBeLessThan(PEAK_RSS_BOUND);
  }, 900_000);
});
