import { runLoad, warmUp, type LoadOptions, type LoadResult, type PlannedRequest } from './load.js';
import { step } from './progress.js';
import { CEILING_APPLICATION, SERVICE_APPLICATION } from './service.js';
import {
  formatNumber,
  measurementOf,
  ratioOf,
  type BenchContext,
  type ScenarioResult,
  type TargetCheck,
} from './results.js';

const MIN_RATIO = 0.8;
const MAX_P99_MS = 50;

export interface ReadComparison {
  readonly id: number;
  readonly title: string;
  /** The next request to the service and the same lookup on the ceiling app (both get the same random key). */
  readonly next: () => { service: PlannedRequest; ceiling: PlannedRequest };
}

function onlyOk(result: LoadResult): TargetCheck {
  const other = Object.entries(result.statuses).filter(([status]) => status !== '200');
  const failures = other.reduce((sum, [, count]) => sum + count, 0) + result.connectionErrors;
  return {
    target: 'every answer 200',
    actual: failures === 0 ? 'all 200' : `${failures} not 200: ${JSON.stringify(result.statuses)}`,
    met: failures === 0,
  };
}

/** Scenarios 1 and 2: the same random lookups against the service and against the bare ceiling app. */
export async function compareReads(ctx: ReadComparison & { bench: BenchContext }): Promise<ScenarioResult> {
  const { config, service, ceiling, authorization } = ctx.bench;
  const base = { connections: config.connections, seconds: config.duration };
  const serviceRun: LoadOptions = {
    ...base,
    label: `scenario ${ctx.id} service`,
    baseUrl: service.baseUrl,
    headers: { authorization },
    next: () => ctx.next().service,
    rssPid: service.process.pid,
    database: { pool: ctx.bench.db.pool, applicationName: SERVICE_APPLICATION },
  };
  const ceilingRun: LoadOptions = {
    ...base,
    label: `scenario ${ctx.id} ceiling`,
    baseUrl: ceiling.baseUrl,
    next: () => ctx.next().ceiling,
    rssPid: ceiling.process.pid,
    database: { pool: ctx.bench.db.pool, applicationName: CEILING_APPLICATION },
  };
  step(`scenario ${ctx.id}: ${ctx.title}`);
  await warmUp(serviceRun, config.warmup);
  const measured = await runLoad(serviceRun);
  await warmUp(ceilingRun, config.warmup);
  const bare = await runLoad(ceilingRun);

  const ratio = ratioOf(measured.requestsPerSecond, bare.requestsPerSecond) ?? 0;
  const targets: TargetCheck[] = [
    { target: `≥ ${MIN_RATIO} × ceiling`, actual: `${ratio.toFixed(2)} ×`, met: ratio >= MIN_RATIO },
    {
      target: `p99 < ${MAX_P99_MS} ms`,
      actual: `${formatNumber(measured.p99Ms)} ms`,
      met: measured.p99Ms < MAX_P99_MS,
    },
    onlyOk(measured),
  ];
  return {
    id: ctx.id,
    title: ctx.title,
    service: measurementOf('service', measured),
    ceiling: measurementOf('bare Express 5 + pg, same SELECT', bare),
    ratio,
    ratioBasis: 'req/s',
    targets,
    details: { service: measured, ceiling: bare },
    notes: [],
  };
}
