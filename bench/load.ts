import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { watchCpu, type CpuShare } from './cpu-share.js';
import type pg from 'pg';
import { sampleWaits, type WaitProfile } from './pg-waits.js';
import { startProgress } from './progress.js';
import { onStopping, sampleRss } from './processes.js';

export const JWT_SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/** A real HS256 token, as a client of the service would send it. */
export function bearerToken(): string {
  return `Bearer ${jwt.sign({ sub: 'bench', scope: 'inventory' }, JWT_SECRET, { algorithm: 'HS256', expiresIn: '2h' })}`;
}

export interface PlannedRequest {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly body?: string;
  /** Headers of this request alone (e.g. an If-None-Match naming the resource's tag). */
  readonly headers?: Record<string, string>;
  /** Groups the statistics of a mixed workload. */
  readonly kind?: string;
}

export interface LoadOptions {
  readonly label: string;
  readonly baseUrl: string;
  readonly connections: number;
  readonly seconds: number;
  readonly headers?: Record<string, string>;
  readonly next: () => PlannedRequest;
  /** Sees every response body (e.g. to add up allocated quantities). */
  readonly onBody?: (kind: string, status: number, body: string) => void;
  /** Sends `X-Request-Id: <prefix>-<n>` on every request, so what the service did for it can be found by id. */
  readonly requestIdPrefix?: string;
  /** Sees every answer with its request id (the echoed X-Request-Id) and when it arrived (`wallClockMs`). */
  readonly onAnswer?: (answer: Answer) => void;
  /** The process whose peak RSS the run reports. */
  readonly rssPid?: number;
  /** Whose connections to watch in pg_stat_activity during the run. */
  readonly database?: { readonly pool: pg.Pool; readonly applicationName: string };
}

export interface Answer {
  readonly kind: string;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly atMs: number;
}

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across this process's clocks. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly completed: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Socket errors and timeouts: no HTTP answer at all. */
  readonly connectionErrors: number;
  readonly timeouts: number;
  readonly statuses: Record<string, number>;
  /** Status counts per request kind (mixed workloads). */
  readonly statusesByKind: Record<string, Record<string, number>>;
  readonly latencyByKind: Record<string, LatencySummary>;
  readonly peakRssMb: number | undefined;
  readonly seconds: number;
  readonly cpu: CpuShare | undefined;
  readonly waits: WaitProfile | undefined;
}

/** The echoed X-Request-Id; autocannon keeps the header names as the server wrote them. */
function requestIdOf(headers: Record<string, unknown> | undefined): string | undefined {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'x-request-id' && typeof value === 'string') return value;
  }
  return undefined;
}

let activeRun: autocannon.Instance | undefined;
onStopping(() => activeRun?.stop());

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One autocannon run (as a library); every request is built by `next`, so each can differ. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const progress = startProgress(options.label, options.seconds);
  const sampling = options.rssPid === undefined ? undefined : sampleRss(options.rssPid);
  const cpuWatch = watchCpu(options.rssPid);
  const waitSampling = options.database && sampleWaits(options.database.pool, options.database.applicationName);
  const statusesByKind: Record<string, Record<string, number>> = {};
  const timesByKind: Record<string, number[]> = {};
  let lastKind = 'request';
  let requests = 0;
  let ticks = 0;
  let inSecond = 0;

  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.baseUrl,
        connections: options.connections,
        duration: options.seconds,
        timeout: 30,
        headers: options.headers ?? {},
        requests: [
          {
            setupRequest: (request, context) => {
              const planned = options.next();
              (context as { kind?: string }).kind = planned.kind ?? 'request';
              const headers = {
                ...request.headers,
                ...planned.headers,
                ...(planned.body && { 'content-type': 'application/json' }),
                ...(options.requestIdPrefix && { 'x-request-id': `${options.requestIdPrefix}-${++requests}` }),
              };
              return { ...request, method: planned.method ?? 'GET', path: planned.path, body: planned.body, headers };
            },
            onResponse: (status, body, context, headers) => {
              // The tracker's 'response' event for this very response follows synchronously.
              lastKind = (context as { kind?: string }).kind ?? 'request';
              const counts = (statusesByKind[lastKind] ??= {});
              counts[status] = (counts[status] ?? 0) + 1;
              options.onBody?.(lastKind, status, body);
              if (options.onAnswer) {
                options.onAnswer({ kind: lastKind, status, requestId: requestIdOf(headers), atMs: wallClockMs() });
              }
            },
          },
        ],
      },
      (error: unknown, finished: autocannon.Result) => (error ? reject(error) : resolve(finished)),
    );
    activeRun = instance;
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      (timesByKind[lastKind] ??= []).push(responseTime);
      inSecond++;
    });
    instance.on('tick', () => {
      ticks++;
      progress.update(ticks, `${inSecond.toLocaleString('en-US')} req/s`);
      inSecond = 0;
    });
  });
  activeRun = undefined;
  progress.finish(`${Math.round(result.requests.average).toLocaleString('en-US')} req/s average`);
  const peakRssMb = sampling?.stop();
  const cpu = cpuWatch.stop();
  const waits = await waitSampling?.stop();

  const latencyByKind: Record<string, LatencySummary> = {};
  for (const [kind, times] of Object.entries(timesByKind)) {
    const sorted = times.sort((a, b) => a - b);
    latencyByKind[kind] = { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
  }
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stat.count ?? 0;
  const completed = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    requestsPerSecond: completed / result.duration,
    completed,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    connectionErrors: result.errors,
    timeouts: result.timeouts,
    statuses,
    statusesByKind,
    latencyByKind,
    peakRssMb,
    seconds: result.duration,
    cpu,
    waits,
  };
}

/** An unmeasured run of the same requests, so JIT, pools and caches are warm when the measured run starts. */
export async function warmUp(options: LoadOptions, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  await runLoad({
    ...options,
    label: `${options.label} (warm-up)`,
    seconds,
    rssPid: undefined,
    onBody: undefined,
    requestIdPrefix: undefined,
    onAnswer: undefined,
    database: undefined,
  });
}

export function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}
