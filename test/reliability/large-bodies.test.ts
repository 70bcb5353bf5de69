import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';
import { bulkBodyOfSize, processMemory } from './harness.js';

/**
 * Issue 15: ten clients sending the largest bulk body at once to the built service (`node dist/main.js`). Bulk
 * creates of tiny Products cost the most memory per byte: parsed, validated, inserted and turned into events they
 * take about 35 times their JSON, so one 4 MiB body alone grows the process by about 145 MB. The body budget lets
 * one be handled at a time; without it, the same ten grew the process by 575 MB and six of them failed with 503
 * (measured on the commit before the budget). The bound: RSS grows by less than 100 × BULK_BODY_LIMIT, which ten
 * bodies at once would exceed, and a health check keeps answering UP meanwhile.
 */
const BULK_LIMIT = 4 * 1024 * 1024;
const BODIES = 10;
const RSS_GROWTH_BOUND = 100 * BULK_LIMIT;
const HEALTH_EVERY_MS = 200;

let database: TestDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  // The ten are handled one after another for longer than the default 30 s a body may wait for its turn; here all
  // are to be read, to measure what they cost.
  service = (
    await startServicesOnDatabase(database.url, 1, { BULK_BODY_LIMIT: '4mb', BODY_BUDGET_WAIT_MS: '300000' })
  )[0]!;
}, 180_000);

afterAll(async () => {
  await stopServices(service ? [service] : []);
  await database?.drop();
}, 60_000);

async function memory(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  return processMemory(service.child.pid, field);
}

interface HealthAnswer {
  status: number;
  body: unknown;
  ms: number;
}

/** Asks for health every HEALTH_EVERY_MS until `stop` is called; answers everything it heard. */
function watchHealth(): { stop: () => Promise<HealthAnswer[]> } {
  const answers: HealthAnswer[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(`${service.baseUrl}/actuator/health`, { signal: AbortSignal.timeout(60_000) });
      answers.push({ status: response.status, body: await response.json(), ms: performance.now() - started });
      await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return answers;
    },
  };
}

function log(message: string): void {
  // eslint-disable-next-line no-console -- RELIABILITY.md reports these figures
  console.log(message);
}

describe('ten bulk bodies of the largest size at once (issue 15)', () => {
  it('creates all of them, one after another, with RSS bounded and health answering throughout', async () => {
    const bodies = Array.from({ length: BODIES }, (_, index) => bulkBodyOfSize(`LARGE-${index}`, BULK_LIMIT));
    expect(bodies.every(({ text }) => Buffer.byteLength(text) === BULK_LIMIT)).toBe(true);
    const rssBefore = await memory('VmRSS');
    const health = watchHealth();
    const started = performance.now();

    const statuses = await Promise.all(
      bodies.map(async ({ text }) => {
        const response = await fetch(`${service.baseUrl}/v1/products`, {
          method: 'POST',
          headers: { Authorization: bearer(), 'Content-Type': 'application/json' },
          body: text,
          signal: AbortSignal.timeout(300_000),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const answers = await health.stop();
    const growth = (await memory('VmHWM')) - rssBefore;
    const slowest = Math.max(...answers.map(({ ms }) => ms));
    log(
      `${BODIES} × ${BULK_LIMIT} bytes (${bodies[0]!.count} Products each) in ${seconds.toFixed(1)} s: ` +
        `RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, peak growth ${(growth / 2 ** 20).toFixed(0)} MiB ` +
        `(bound ${RSS_GROWTH_BOUND / 2 ** 20} MiB); ${answers.length} health checks, slowest ${slowest.toFixed(0)} ms`,
    );

    expect(statuses).toEqual(Array(BODIES).fill(201));
    const stored = await database.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM product WHERE sku LIKE 'LARGE-%'",
    );
    expect(stored.rows[0]!.n).toBe(BODIES * bodies[0]!.count);
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    expect(answers.length).toBeGreaterThan(BODIES);
    expect(answers.filter(({ status, body }) => status !== 200 || JSON.stringify(body) !== '{"status":"UP"}')).toEqual(
      [],
    );
  }, 360_000);
});
