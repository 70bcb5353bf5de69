import { watchCpu, type CpuShare } from './cpu-share.js';
import { streamRequest, type StreamedResponse } from './http.js';
import { sampleRss } from './processes.js';
import { startProgress, step } from './progress.js';
import { formatNumber, ratioOf, type BenchContext, type Measurement, type ScenarioResult } from './results.js';
import { countProducts, seedProducts } from './seed.js';

const MAX_RSS_MB = 200;
// One per Product in both bodies: the service's view and the ceiling's raw rows each have one createDt.
const PRODUCT_MARKER = '"createDt":';

interface Stream {
  readonly response: StreamedResponse;
  readonly products: number;
  readonly megabytesPerSecond: number;
  readonly productsPerSecond: number;
  readonly peakRssMb: number;
  readonly cpu: CpuShare | undefined;
}

async function stream(
  label: string,
  url: string,
  headers: Record<string, string>,
  pid: number,
  expected: number,
): Promise<Stream> {
  const progress = startProgress(label, expected);
  const sampling = sampleRss(pid, 50);
  const cpuWatch = watchCpu(pid);
  const response = await streamRequest(url, headers, PRODUCT_MARKER, (bytes, markers) =>
    progress.update(markers, `${formatNumber(bytes / 1e6, 1)} MB`),
  );
  const peakRssMb = sampling.stop();
  const cpu = cpuWatch.stop();
  progress.finish();
  if (response.status !== 200 || response.firstByte !== '[' || response.lastByte !== ']') {
    throw new Error(`${label}: status ${response.status}, body ${response.firstByte}…${response.lastByte}`);
  }
  const seconds = response.ms / 1000;
  return {
    response,
    products: response.markers,
    megabytesPerSecond: response.bytes / 1e6 / seconds,
    productsPerSecond: response.markers / seconds,
    peakRssMb,
    cpu,
  };
}

async function both(ctx: BenchContext, expected: number): Promise<{ service: Stream; ceiling: Stream }> {
  const size = expected.toLocaleString('en-US');
  const service = await stream(
    `scenario 5 service, ${size} products`,
    `${ctx.service.baseUrl}/v1/products`,
    { authorization: ctx.authorization, accept: 'application/json' },
    ctx.service.process.pid,
    expected,
  );
  const ceiling = await stream(
    `scenario 5 ceiling, ${size} products`,
    `${ctx.ceiling.baseUrl}/products/stream`,
    {},
    ctx.ceiling.process.pid,
    expected,
  );
  return { service, ceiling };
}

/** The service's CPU time per MB of (decompressed) body: what compressing costs, beside the MB/s. */
function cpuMsPerMb(run: Stream): string {
  if (!run.cpu) return 'n/a';
  return formatNumber(((run.cpu.target / 100) * run.response.ms) / (run.response.bytes / 1e6), 1);
}

function measurement(label: string, run: Stream): Measurement {
  return {
    label,
    throughput: run.megabytesPerSecond,
    unit: 'MB/s',
    p50Ms: run.response.ms,
    peakRssMb: run.peakRssMb,
    cpu: run.cpu,
  };
}

/**
 * Scenario 5: the streamed GET /v1/products at the seeded size and, after topping the table up, at the full
 * size: MB/s and the service's peak RSS at both, against the bare app streaming the same query's rows.
 */
export async function streamProducts(ctx: BenchContext): Promise<ScenarioResult> {
  const { pool } = ctx.db;
  step('scenario 5: streamed GET /v1/products');
  const smallCount = await countProducts(pool);
  const small = await both(ctx, smallCount);
  const missing = ctx.config.streamProducts - smallCount;
  if (missing > 0) {
    await seedProducts(pool, 'S', 1, missing);
    await pool.query('VACUUM ANALYZE product');
  }
  const largeCount = await countProducts(pool);
  const large = await both(ctx, largeCount);
  const compressed = (encoding: string): Promise<Stream> =>
    stream(
      `scenario 5 service ${encoding}, ${largeCount.toLocaleString('en-US')} products`,
      `${ctx.service.baseUrl}/v1/products`,
      { authorization: ctx.authorization, accept: 'application/json', 'accept-encoding': encoding },
      ctx.service.process.pid,
      largeCount,
    );
  const gzipped = await compressed('gzip');
  const brotli = await compressed('br');

  for (const [label, run, count] of [
    ['service small', small.service, smallCount],
    ['ceiling small', small.ceiling, smallCount],
    ['service large', large.service, largeCount],
    ['service large gzip', gzipped, largeCount],
    ['service large br', brotli, largeCount],
    ['ceiling large', large.ceiling, largeCount],
  ] as const) {
    if (run.products !== count) throw new Error(`scenario 5 ${label}: streamed ${run.products} of ${count} products`);
  }
  const ratio = ratioOf(large.service.productsPerSecond, large.ceiling.productsPerSecond) ?? 0;
  const growth = large.service.peakRssMb - small.service.peakRssMb;
  return {
    id: 5,
    title: `Streamed GET /v1/products, ${largeCount.toLocaleString('en-US')} products`,
    service: measurement('service', large.service),
    ceiling: measurement('bare Express 5 + pg, same keyset pages, raw rows', large.ceiling),
    ratio,
    ratioBasis: 'products/s (the bodies differ in size)',
    extra: [
      measurement('service, gzip (MB/s of the decompressed body)', gzipped),
      measurement('service, br (MB/s of the decompressed body)', brotli),
      measurement(`service at ${smallCount.toLocaleString('en-US')} products`, small.service),
      measurement(`ceiling at ${smallCount.toLocaleString('en-US')} products`, small.ceiling),
    ],
    targets: [
      {
        target: `peak RSS < ${MAX_RSS_MB} MB at ${largeCount.toLocaleString('en-US')}`,
        actual: `${formatNumber(large.service.peakRssMb)} MB (${formatNumber(small.service.peakRssMb)} MB at ${smallCount.toLocaleString('en-US')})`,
        met: large.service.peakRssMb < MAX_RSS_MB,
      },
    ],
    details: {
      small: { products: smallCount, service: small.service, ceiling: small.ceiling },
      large: { products: largeCount, service: large.service, ceiling: large.ceiling, gzip: gzipped, br: brotli },
      rssGrowthMb: growth,
    },
    notes: [
      'p50 is the time of the whole streamed response.',
      `gzip (issue 27): ${formatNumber(gzipped.response.wireBytes / 1e6, 1)} MB sent for ` +
        `${formatNumber(gzipped.response.bytes / 1e6, 1)} MB; service CPU ${cpuMsPerMb(large.service)} ms/MB plain, ` +
        `${cpuMsPerMb(gzipped)} ms/MB gzip; br: ${formatNumber(brotli.response.wireBytes / 1e6, 1)} MB sent, ` +
        `${cpuMsPerMb(brotli)} ms/MB.`,
      `RSS ${growth >= 0 ? 'grew' : 'shrank'} by ${formatNumber(Math.abs(growth))} MB from ${smallCount.toLocaleString('en-US')} to ${largeCount.toLocaleString('en-US')} products.`,
    ],
  };
}
