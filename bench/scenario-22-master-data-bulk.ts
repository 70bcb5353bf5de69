import http from 'node:http';
import { arrayBody } from '../test/reliability/harness.js';
import { sampleRss } from './processes.js';
import { step } from './progress.js';
import { formatNumber, type BenchContext, type ScenarioResult } from './results.js';

/** Issue 34 item 5, issue 39: the bound each figure is held to. */
const BODY_BYTES = 60 * 2 ** 20;
const RSS_TARGET_MB = 300;
const INDEX_WAIT_TARGET_MS = 200;
const PROBE_EVERY_MS = 100;

/** LocationGroups of about 100 bytes, ten children to a parent, as many as fit in `bytes`; generated as sent. */
function locationGroups(prefix: string, bytes: number): { count: number } & ReturnType<typeof arrayBody> {
  const pad = 'x'.repeat(50);
  const item = (index: number): string =>
    `{"name":"${prefix}-${pad}-${index}"` +
    `${index === 0 ? '' : `,"parent":"${prefix}-${pad}-${Math.floor((index - 1) / 10)}"`}}`;
  // `[`, the items with a comma between two, `]`.
  let count = 0;
  for (let length = 2; length + item(count).length + (count > 0 ? 1 : 0) <= bytes; count++) {
    length += item(count).length + (count > 0 ? 1 : 0);
  }
  return { count, ...arrayBody(item, count) };
}

function put(ctx: BenchContext, body: ReturnType<typeof locationGroups>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${ctx.service.baseUrl}/v1/location-groups`, {
      method: 'PUT',
      headers: { Authorization: ctx.authorization, 'Content-Type': 'application/json', 'Content-Length': body.length },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    body.stream().pipe(request);
  });
}

/**
 * Scenario 22: one 60 MB `PUT /v1/location-groups` (about 600,000 groups) to the service, with `GET /index` asked
 * every 100 ms: how long it takes, the service's peak RSS, and the worst wait of `/index` meanwhile (D38).
 */
export async function masterDataBulk(ctx: BenchContext): Promise<ScenarioResult> {
  const body = locationGroups(`BENCH22-${Date.now()}`, BODY_BYTES);
  step(
    `scenario 22: one ${formatNumber(body.length)}-byte PUT /v1/location-groups (${formatNumber(body.count)} groups)`,
  );
  let running = true;
  const waits: number[] = [];
  const probes = (async () => {
    while (running) {
      const sent = performance.now();
      const response = await fetch(`${ctx.service.baseUrl}/index`, { signal: AbortSignal.timeout(120_000) });
      await response.arrayBuffer();
      waits.push(performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  })();
  const rss = sampleRss(ctx.service.process.pid, 50);
  const started = performance.now();
  const status = await put(ctx, body);
  const seconds = (performance.now() - started) / 1000;
  const peakRssMb = rss.stop();
  running = false;
  await probes;
  const worstMs = Math.max(...waits);
  return {
    id: 22,
    title: 'Master-data bulk at 60 MB (PUT /v1/location-groups)',
    service: { label: 'service', throughput: body.count / seconds, unit: 'groups/s', peakRssMb },
    targets: [
      { target: 'answered 204', actual: String(status), met: status === 204 },
      {
        target: `peak RSS ≤ ${RSS_TARGET_MB} MB`,
        actual: `${formatNumber(peakRssMb)} MB`,
        met: peakRssMb <= RSS_TARGET_MB,
      },
      {
        target: `worst /index wait ≤ ${INDEX_WAIT_TARGET_MS} ms`,
        actual: `${formatNumber(worstMs)} ms`,
        met: worstMs <= INDEX_WAIT_TARGET_MS,
      },
    ],
    details: {
      bytes: body.length,
      groups: body.count,
      status,
      seconds,
      indexProbes: waits.length,
      worstIndexMs: worstMs,
    },
    notes: [`${formatNumber(body.count)} groups in ${seconds.toFixed(1)} s; /index asked ${waits.length} times`],
  };
}
