import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { watchCpu, type CpuShare } from './cpu-share.js';
import { settleBetweenRuns } from './database.js';
import { JWT_SECRET } from './load.js';
import { sampleRss, stopProcess } from './processes.js';
import { startProgress, step } from './progress.js';
import { formatNumber, ratioOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { outboxEventsOf } from './scenario-3-bulk-create.js';
import { productFields } from './seed.js';
import { startService } from './service.js';

const MIN_RATIO = 0.7;
/** Issue 34 "Speed": an import sent with an Idempotency-Key (its body hashed as it streams) at ≥ 0.95 × one without. */
export const MIN_KEYED_RATIO = 0.95;
const MAX_RSS_MB = 250;
/** The first size; the second is BENCH_IMPORT_PRODUCTS (1,000,000): RSS must not grow between them. */
const FIRST_SIZE = 100_000;
const WARMUP_PRODUCTS = 2_000;
/** Lines per piece handed to the socket: one string per line would cost the generator more than the service. */
const LINES_PER_PIECE = 500;

/** Lines 1…count as `lineOf` writes them, handed on in pieces of LINES_PER_PIECE. */
export function* piecesOf(count: number, lineOf: (n: number) => string): Generator<string> {
  let piece = '';
  for (let n = 1; n <= count; n++) {
    piece += lineOf(n);
    if (n % LINES_PER_PIECE === 0 || n === count) {
      yield piece;
      piece = '';
    }
  }
}

/** The NDJSON lines a client streams: the same columns scenario 3 sends and the raw COPY writes. */
function ndjsonPieces(prefix: string, count: number): Generator<string> {
  return piecesOf(count, (n) => {
    const product = productFields(prefix, n);
    return (
      `{"sku":${JSON.stringify(product.sku)},"label":${JSON.stringify(product.label)},` +
      `"description":${JSON.stringify(product.description)},` +
      `"baseUnit":{"unitType":["org.openwms.core.units.api.PieceUnit","PC"],"magnitude":1},"stockZone":"A"}\n`
    );
  });
}

interface ImportRun {
  readonly count: number;
  readonly ms: number;
  readonly rssMb: number;
  readonly cpu: CpuShare | undefined;
  readonly events: number;
}

/**
 * One NDJSON POST of `pieces` to `path`, generated while they are sent, timed to the end of the answer; with
 * `idempotencyKey`, sent under that key (D38). `onCreated` runs as soon as the 201 is in, before the events are
 * counted (what comes right after the answer).
 */
export async function postNdjson<Then = undefined>(
  ctx: Pick<BenchContext, 'db' | 'service' | 'authorization'>,
  path: string,
  pieces: Iterable<string>,
  requestId: string,
  options: { idempotencyKey?: string; onCreated?: () => Promise<Then> } = {},
): Promise<{ ms: number; rssMb: number; cpu: CpuShare | undefined; events: number; then: Then | undefined }> {
  const { idempotencyKey, onCreated } = options;
  const pid = ctx.service.process.pid;
  const sampling = sampleRss(pid, 50);
  const cpuWatch = watchCpu(pid);
  const started = performance.now();
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(`${ctx.service.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: ctx.authorization,
        'content-type': 'application/x-ndjson',
        'x-request-id': requestId,
        ...(idempotencyKey && { 'idempotency-key': idempotencyKey }),
      },
      agent: false,
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (piece: string) => (body += piece));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    pipeline(Readable.from(pieces), request).catch(reject);
  });
  const ms = performance.now() - started;
  const rssMb = sampling.stop();
  const cpu = cpuWatch.stop();
  if (answer.status !== 201)
    throw new Error(`NDJSON POST ${path} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  const then = await onCreated?.();
  return { ms, rssMb, cpu, events: await outboxEventsOf(ctx.db.pool, requestId), then };
}

async function postImport(
  ctx: BenchContext,
  prefix: string,
  count: number,
  requestId: string,
  idempotencyKey?: string,
): Promise<ImportRun> {
  return {
    count,
    ...(await postNdjson(ctx, '/v1/products', ndjsonPieces(prefix, count), requestId, { idempotencyKey })),
  };
}

/** Runs `statement` (a COPY FROM STDIN) with `rows` in one transaction; answers the milliseconds it took. */
export async function timedCopy(pool: pg.Pool, statement: string, rows: Iterable<string>): Promise<number> {
  const client = await pool.connect();
  try {
    const started = performance.now();
    await client.query('BEGIN');
    await pipeline(Readable.from(rows), client.query(copyFrom(statement)));
    await client.query('COMMIT');
    return performance.now() - started;
  } finally {
    client.release();
  }
}

/** The same rows in COPY's text format, straight into the product table: what a hand-written loader gets. */
function rawCopy(pool: pg.Pool, prefix: string, count: number): Promise<number> {
  const rows = piecesOf(count, (n) => {
    const product = productFields(prefix, n);
    return `${product.sku}\t${product.label}\t${product.description}\t1\tPC\tA\n`;
  });
  return timedCopy(
    pool,
    'COPY product (sku, label, description, base_unit_magnitude, base_unit_code, stock_zone) FROM STDIN',
    rows,
  );
}

/**
 * Scenario 7 (issue 14): one streamed NDJSON POST /v1/products of 100,000 and then of 1,000,000 products, the body
 * generated while it is sent; products/s against a raw COPY of the same rows in the same run, and the service's
 * peak RSS at both sizes (it must stay flat: the body is never held).
 */
export async function streamedImport(bench: BenchContext): Promise<ScenarioResult> {
  // An instance of its own: the shared one keeps the heap earlier scenarios grew (scenario 3's bulk body), which its
  // RSS would count against the import.
  const service = await startService({
    databaseUrl: bench.db.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: false,
    main: bench.config.serviceMain,
    env: bench.config.serviceEnv,
    name: 'service-import',
  });
  try {
    return await importOnItsOwn({ ...bench, service });
  } finally {
    await stopProcess(service.process);
  }
}

async function importOnItsOwn(ctx: BenchContext): Promise<ScenarioResult> {
  const count = ctx.config.importProducts;
  const first = Math.min(FIRST_SIZE, count);
  step(`scenario 7: NDJSON POST /v1/products of ${formatNumber(first)} and ${formatNumber(count)} products`);
  await postImport(ctx, 'IW', WARMUP_PRODUCTS, 'bench-s7-warmup');
  await rawCopy(ctx.db.pool, 'CW', WARMUP_PRODUCTS);

  const progress = startProgress('scenario 7 runs', 4);
  const small = await postImport(ctx, 'IS', first, 'bench-s7-small');
  progress.update(1, `service ${formatNumber(first)} in ${Math.round(small.ms)} ms`);
  // Both runs compared start settled: the run before numbered and vacuumed, the statistics fresh.
  await settleBetweenRuns(ctx.db.pool);
  const large = await postImport(ctx, 'IL', count, 'bench-s7-large');
  progress.update(2, `service ${formatNumber(count)} in ${Math.round(large.ms)} ms`);
  await settleBetweenRuns(ctx.db.pool);
  const keyed = await postImport(ctx, 'IK', count, 'bench-s7-keyed', `bench-s7-${Date.now()}`);
  progress.update(3, `service ${formatNumber(count)} with an Idempotency-Key in ${Math.round(keyed.ms)} ms`);
  const copyMs = await rawCopy(ctx.db.pool, 'CL', count);
  progress.update(4, `raw COPY ${formatNumber(count)} in ${Math.round(copyMs)} ms`);
  progress.finish();

  const perSecond = (n: number, ms: number): number => (n / ms) * 1000;
  const throughput = perSecond(count, large.ms);
  const ceiling = perSecond(count, copyMs);
  const ratio = ratioOf(throughput, ceiling) ?? 0;
  const peak = Math.max(small.rssMb, large.rssMb);
  const keyedRatio = large.ms / keyed.ms;
  const targets: TargetCheck[] = [
    { target: `≥ ${MIN_RATIO} × raw COPY`, actual: `${ratio.toFixed(2)} ×`, met: ratio >= MIN_RATIO },
    {
      target: `peak RSS < ${MAX_RSS_MB} MB at ${formatNumber(first)} and at ${formatNumber(count)}`,
      actual: `${formatNumber(small.rssMb)} MB and ${formatNumber(large.rssMb)} MB`,
      met: peak < MAX_RSS_MB,
    },
    {
      target: `with an Idempotency-Key ≥ ${MIN_KEYED_RATIO} × without`,
      actual: `${keyedRatio.toFixed(2)} ×`,
      met: keyedRatio >= MIN_KEYED_RATIO,
    },
  ];
  return {
    id: 7,
    title: `Streamed NDJSON POST /v1/products, ${formatNumber(count)} products in one request`,
    service: {
      label: 'service',
      throughput,
      unit: 'products/s',
      p50Ms: large.ms,
      p99Ms: large.ms,
      peakRssMb: large.rssMb,
      cpu: large.cpu,
    },
    ceiling: {
      label: 'raw COPY … FROM STDIN into product, one transaction',
      throughput: ceiling,
      unit: 'products/s',
      p50Ms: copyMs,
      p99Ms: copyMs,
    },
    extra: [
      {
        label: `service, ${formatNumber(first)} products`,
        throughput: perSecond(first, small.ms),
        unit: 'products/s',
        p50Ms: small.ms,
        p99Ms: small.ms,
        peakRssMb: small.rssMb,
        cpu: small.cpu,
      },
      {
        label: `service, ${formatNumber(count)} products with an Idempotency-Key`,
        throughput: perSecond(count, keyed.ms),
        unit: 'products/s',
        p50Ms: keyed.ms,
        p99Ms: keyed.ms,
        peakRssMb: keyed.rssMb,
        cpu: keyed.cpu,
      },
    ],
    ratio,
    ratioBasis: 'products/s',
    targets,
    details: {
      serviceMs: { [first]: Math.round(small.ms), [count]: Math.round(large.ms) },
      keyedMs: Math.round(keyed.ms),
      peakRssMb: { [first]: small.rssMb, [count]: large.rssMb },
      rawCopyMs: Math.round(copyMs),
      outboxEvents: { [first]: small.events, [count]: large.events },
    },
    notes: [
      'One run at each size; p50 and p99 are that run. The body is generated while it is sent, as a file is read.',
      `Events written in the import's transaction (D27: one per product): ${formatNumber(small.events)} and ` +
        `${formatNumber(large.events)}.`,
      'The raw COPY writes the product rows only: no validation, no staging table, no events.',
      `With an Idempotency-Key (other SKUs, run right after the one without): ${keyedRatio.toFixed(2)} × its ` +
        'products/s; one run each.',
    ],
  };
}
