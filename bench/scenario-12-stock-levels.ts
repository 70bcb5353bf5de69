import type pg from 'pg';
import { timedRequest } from './http.js';
import { runLoad, warmUp, type LoadOptions, type LoadResult } from './load.js';
import { sampleRss } from './processes.js';
import { step } from './progress.js';
import {
  formatNumber,
  measurementOf,
  ratioOf,
  type BenchContext,
  type ScenarioResult,
  type TargetCheck,
} from './results.js';
import { productSku, type StockShape } from './seed.js';
import { SERVICE_APPLICATION } from './service.js';

const MIN_RATIO = 0.8;
const HOT_MAX_P99_MS = 20;
/** Locked LoadUnits of the hot Product: a reading subtracts what lies in them. */
const HOT_LOCKED_LOAD_UNITS = 10;
/**
 * The hot Product's latency target is read at a few connections: at scenario 1's 50, one process's queue alone
 * puts the p99 of any lookup near 50 ms (scenario 1), whatever a request costs.
 */
const HOT_CONNECTIONS = 4;

/** One Product with 100,000 units (10,000 LoadUnits of 10), seeded besides scenario 1's Products. */
export const hotStock: StockShape = {
  productPrefix: 'HOT',
  products: 1,
  tuPrefix: 'HOTTU',
  loadUnits: 10_000,
  unitsPerLoadUnit: 10,
  unitQuantity: 10,
};

export async function lockSomeHotLoadUnits(pool: pg.Pool): Promise<void> {
  await pool.query(
    `UPDATE load_unit SET locked = true
      WHERE id IN (SELECT lu.id FROM load_unit lu JOIN product p ON p.id = lu.product_id
                    WHERE p.sku = $1 ORDER BY lu.id LIMIT $2)`,
    [productSku(hotStock.productPrefix, 1), HOT_LOCKED_LOAD_UNITS],
  );
}

/** Follows the stock list's next links from the first page to the last: pages, Products, time, service RSS. */
async function walkAllPages(
  bench: BenchContext,
): Promise<{ pages: number; products: number; ms: number; rss: number }> {
  const rss = sampleRss(bench.service.process.pid!);
  const started = performance.now();
  let url: string | undefined = `${bench.service.baseUrl}/v1/stock?limit=1000`;
  let pages = 0;
  let products = 0;
  while (url) {
    const response = await timedRequest(url, { method: 'GET', headers: { authorization: bench.authorization } });
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
    pages += 1;
    products += (JSON.parse(response.body) as unknown[]).length;
    const next = /^<([^>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1];
    url = next === undefined ? undefined : `${bench.service.baseUrl}${new URL(next).pathname}${new URL(next).search}`;
  }
  return { pages, products, ms: performance.now() - started, rss: rss.stop() };
}

/**
 * Scenario 12 (issue 24): GET /v1/stock?sku= for random SKUs of scenario 1's Products against scenario 1's own
 * lookup of the same SKUs, run back to back; then one hot Product with 100,000 units; then every Product's
 * figures, all pages of the list.
 */
export async function stockLevels(bench: BenchContext): Promise<ScenarioResult> {
  const { config, service, authorization } = bench;
  const products = config.products;
  const title = `GET /v1/stock?sku= on ${products.toLocaleString('en-US')} products and on one with 100,000 units`;
  const randomSku = (): string => productSku('P', 1 + Math.floor(Math.random() * products));
  const run = (label: string, path: () => string, connections = config.connections): LoadOptions => ({
    label: `scenario 12 ${label}`,
    baseUrl: service.baseUrl,
    connections,
    seconds: config.duration,
    headers: { authorization },
    next: () => ({ path: path() }),
    rssPid: service.process.pid,
    database: { pool: bench.db.pool, applicationName: SERVICE_APPLICATION },
  });
  step(`scenario 12: ${title}`);
  const stock = run('stock levels', () => `/v1/stock?sku=${randomSku()}`);
  const lookup = run('product lookup', () => `/v1/products?sku=${randomSku()}`);
  const hotSku = productSku(hotStock.productPrefix, 1);
  const hot = run('hot product', () => `/v1/stock?sku=${hotSku}`);
  const hotFew = run(`hot product, ${HOT_CONNECTIONS} connections`, () => `/v1/stock?sku=${hotSku}`, HOT_CONNECTIONS);
  await warmUp(stock, config.warmup);
  const byStock: LoadResult = await runLoad(stock);
  await warmUp(lookup, config.warmup);
  const byLookup: LoadResult = await runLoad(lookup);
  const onHot: LoadResult = await runLoad(hot);
  const onHotFew: LoadResult = await runLoad(hotFew);
  step('scenario 12: every Product, all pages of GET /v1/stock');
  const pages = await walkAllPages(bench);

  const ratio = ratioOf(byStock.requestsPerSecond, byLookup.requestsPerSecond) ?? 0;
  const allOk = [byStock, byLookup, onHot, onHotFew].every(
    (result) => Object.keys(result.statuses).every((status) => status === '200') && result.connectionErrors === 0,
  );
  const targets: TargetCheck[] = [
    { target: `≥ ${MIN_RATIO} × scenario 1's lookup`, actual: `${ratio.toFixed(2)} ×`, met: ratio >= MIN_RATIO },
    {
      target: `hot Product p99 < ${HOT_MAX_P99_MS} ms (${HOT_CONNECTIONS} connections)`,
      actual: `${formatNumber(onHotFew.p99Ms, 1)} ms`,
      met: onHotFew.p99Ms < HOT_MAX_P99_MS,
    },
    { target: 'every answer 200', actual: allOk ? 'all 200' : 'some not 200', met: allOk },
  ];
  return {
    id: 12,
    title,
    service: measurementOf('GET /v1/stock?sku=, random SKUs', byStock),
    ceiling: measurementOf("scenario 1's GET /v1/products?sku=, same SKUs, same run", byLookup),
    ratio,
    ratioBasis: 'req/s',
    targets,
    extra: [
      measurementOf(
        `GET /v1/stock?sku= of the hot Product (100,000 units, ${HOT_LOCKED_LOAD_UNITS} LoadUnits locked)`,
        onHot,
      ),
      {
        label: `GET /v1/stock, all ${formatNumber(pages.pages)} pages of 1,000 (${formatNumber(pages.products)} Products)`,
        throughput: pages.products / (pages.ms / 1000),
        unit: 'Products/s',
        peakRssMb: pages.rss,
      },
    ],
    details: {
      stockLevels: byStock,
      productLookup: byLookup,
      hotProduct: onHot,
      hotProductFewConnections: onHotFew,
      allPages: pages,
    },
    notes: [
      `All pages of the list took ${formatNumber(pages.ms / 1000, 1)} s, one request after the other; the service's ` +
        `peak RSS meanwhile was ${formatNumber(pages.rss)} MB.`,
    ],
  };
}
