import type pg from 'pg';
import { HAL_JSON } from '../src/http/media-types.js';
import { entityTag } from '../src/http/validators.js';
import { selectProductsAfter } from '../src/products/sql.js';
import { productVersion } from '../src/products/view.js';
import { runLoad, warmUp, type LoadResult } from './load.js';
import { step } from './progress.js';
import { compareReads } from './read-comparison.js';
import { formatNumber, measurementOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { productSku } from './seed.js';
import { jwksVariant } from './scenario-1-jwks.js';
import { SERVICE_APPLICATION } from './service.js';

const TAG_PAGE = 5_000;

/**
 * The ETag the service answers for each Product (HAL: what a lookup without Accept gets), made by the service's own
 * functions from the rows as it reads them, so a lookup can name its current tag.
 */
async function currentTags(pool: pg.Pool): Promise<Map<string, string>> {
  const tags = new Map<string, string>();
  for (let after = 0; ;) {
    const rows = await selectProductsAfter(pool, after, TAG_PAGE);
    if (rows.length === 0) return tags;
    for (const row of rows) tags.set(row.sku, entityTag(productVersion(row), HAL_JSON));
    after = Number(rows.at(-1)!.id);
  }
}

function only304(result: LoadResult): TargetCheck {
  const other = Object.entries(result.statuses).filter(([status]) => status !== '304');
  const failures = other.reduce((sum, [, count]) => sum + count, 0) + result.connectionErrors;
  return {
    target: 'every revalidation 304',
    actual: failures === 0 ? 'all 304' : `${failures} not 304: ${JSON.stringify(result.statuses)}`,
    met: failures === 0,
  };
}

/** CPU ms of the service per request of a run. */
function serviceCpuMs(result: LoadResult): number | undefined {
  return result.cpu && result.requestsPerSecond > 0
    ? (result.cpu.target / 100 / result.requestsPerSecond) * 1000
    : undefined;
}

/**
 * Issue 27: the same random lookups, each sending If-None-Match with the Product's current tag, as a browser
 * revalidating what it has: every answer a 304 without a body.
 */
async function revalidatedLookups(bench: BenchContext): Promise<LoadResult> {
  const { config, service, authorization } = bench;
  const tags = await currentTags(bench.db.pool);
  const run = {
    label: 'scenario 1 service, If-None-Match',
    baseUrl: service.baseUrl,
    connections: config.connections,
    seconds: config.duration,
    headers: { authorization },
    next: () => {
      const sku = productSku('P', 1 + Math.floor(Math.random() * config.products));
      return { path: `/v1/products?sku=${sku}`, headers: { 'if-none-match': tags.get(sku)! } };
    },
    rssPid: service.process.pid,
    database: { pool: bench.db.pool, applicationName: SERVICE_APPLICATION },
  };
  await warmUp(run, config.warmup);
  return runLoad(run);
}

/**
 * Scenario 1: GET /v1/products?sku= on the seeded products, with auth and logging on; then the same lookups
 * revalidated with If-None-Match (issue 27), all 304.
 */
export async function productsBySku(bench: BenchContext): Promise<ScenarioResult> {
  const products = bench.config.products;
  const plain = await compareReads({
    bench,
    id: 1,
    title: `GET /v1/products?sku= on ${products.toLocaleString('en-US')} products`,
    next: () => {
      const sku = productSku('P', 1 + Math.floor(Math.random() * products));
      return { service: { path: `/v1/products?sku=${sku}` }, ceiling: { path: `/products?sku=${sku}` } };
    },
  });
  step('scenario 1: the same lookups with If-None-Match naming the current tag');
  const revalidated = await revalidatedLookups(bench);
  const plainRun = plain.details.service as LoadResult;
  const cpu = (run: LoadResult): string => `${formatNumber(serviceCpuMs(run) ?? Number.NaN, 3)} ms`;
  const jwks = bench.config.jwks ? await jwksVariant(bench, plainRun) : undefined;
  return {
    ...plain,
    extra: [
      measurementOf('service, If-None-Match with the current tag (all 304)', revalidated),
      ...(jwks?.measurements ?? []),
    ],
    targets: [...plain.targets, only304(revalidated)],
    details: { ...plain.details, revalidated, ...jwks?.details },
    notes: [
      ...(jwks?.notes ?? []),
      `If-None-Match hits: ${formatNumber(revalidated.requestsPerSecond)} req/s, ` +
        `${(revalidated.requestsPerSecond / plainRun.requestsPerSecond).toFixed(2)} × the plain lookups; p99 ` +
        `${formatNumber(revalidated.p99Ms)} ms against ${formatNumber(plainRun.p99Ms)} ms; service CPU ` +
        `${cpu(revalidated)} per request against ${cpu(plainRun)}. A 304 still reads the row its tag is made of; ` +
        'it saves the rendering and the body.',
    ],
  };
}
