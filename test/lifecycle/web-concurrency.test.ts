import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/ports.js';
import { stopServices } from '../support/service-cluster.js';
import {
  ensureBuilt,
  startService,
  waitForExit,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';
import { bearer, TEST_SECRET } from '../support/tokens.js';
import { eventually } from '../reliability/harness.js';

/** Issue 14: WEB_CONCURRENCY=2 runs two worker processes on one port behind one primary. */
let db: TestDatabase;
let service: ServiceProcess;

async function workerPids(): Promise<number[]> {
  const { stdout } = await promisify(execFile)('ps', ['--ppid', String(service.child.pid), '-o', 'pid=']).catch(
    (error: { stdout: string }) => error,
  );
  return stdout
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0);
}

async function get(path: string): Promise<Response> {
  return fetch(`${service.baseUrl}${path}`, { headers: { Authorization: bearer() } });
}

/** The sum over the exposition's series of `http_server_request_duration_seconds_count` for one route. */
function requestCount(metrics: string, route: string): number {
  return metrics
    .split('\n')
    .filter(
      (line) => line.startsWith('http_server_request_duration_seconds_count{') && line.includes(`route="${route}"`),
    )
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureBuilt();
  service = startService(
    {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      AUTH_JWT_SECRET: TEST_SECRET,
      DATABASE_URL: db.url,
      WEB_CONCURRENCY: '2',
    },
    await freePort(),
  );
  await waitUntilUp(service, 60_000);
}, 180_000);

afterAll(async () => {
  if (service) await stopServices([service]);
  await db?.drop();
}, 60_000);

describe('WEB_CONCURRENCY=2', () => {
  it('serves from two worker processes and reports the metrics of both in one scrape', async () => {
    expect(await workerPids()).toHaveLength(2);
    const answers = await Promise.all(Array.from({ length: 40 }, () => get('/v1/products/index')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200));

    const scrapes = await Promise.all(
      Array.from({ length: 4 }, async () => (await get('/actuator/prometheus')).text()),
    );

    // Whichever worker a scrape reaches, it counts the 40 requests of both.
    for (const metrics of scrapes) expect(requestCount(metrics, '/v1/products/index')).toBe(40);
    expect(scrapes[0]).toMatch(/^db_pool_connections_idle \d+$/m);
  });

  it('replaces a worker that dies and keeps answering', async () => {
    const [victim] = await workerPids();
    process.kill(victim!, 'SIGKILL');

    await eventually(
      'a new worker',
      async () => {
        const pids = await workerPids();
        return pids.length === 2 && !pids.includes(victim!);
      },
      30_000,
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => get('/v1/products/index')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
  });

  it('stops every worker on SIGTERM and exits 0', async () => {
    const workers = await workerPids();
    service.child.kill('SIGTERM');

    expect(await waitForExit(service, 30_000)).toEqual({ code: 0, signal: null });
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    const stopped = service.logEntries().filter((entry) => entry.msg === 'stopped');
    expect(stopped).toHaveLength(3);
  });
});
