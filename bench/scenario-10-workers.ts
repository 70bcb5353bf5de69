import { JWT_SECRET } from './load.js';
import { compareReads } from './read-comparison.js';
import type { BenchContext, ScenarioResult } from './results.js';
import { productSku } from './seed.js';
import { startService } from './service.js';
import { stopProcess } from './processes.js';

const WORKERS = 2;

/**
 * Scenario 10 (issue 14): scenario 1's lookups against the service with WEB_CONCURRENCY=2, read against the same
 * single-process ceiling app. Above 1.0 × means the second core is worth more than the per-request overhead.
 */
export async function productsBySkuOnWorkers(bench: BenchContext): Promise<ScenarioResult> {
  const workers = await startService({
    databaseUrl: bench.db.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: false,
    main: bench.config.serviceMain,
    env: { ...bench.config.serviceEnv, WEB_CONCURRENCY: String(WORKERS) },
    name: 'service-workers',
  });
  try {
    const products = bench.config.products;
    const result = await compareReads({
      bench: { ...bench, service: workers },
      id: 10,
      title: `GET /v1/products?sku= on ${products.toLocaleString('en-US')} products, WEB_CONCURRENCY=${WORKERS}`,
      next: () => {
        const sku = productSku('P', 1 + Math.floor(Math.random() * products));
        return { service: { path: `/v1/products?sku=${sku}` }, ceiling: { path: `/products?sku=${sku}` } };
      },
    });
    return {
      ...result,
      targets: [
        {
          target: '> 1.0 × the single-process ceiling',
          actual: `${result.ratio?.toFixed(2)} ×`,
          met: (result.ratio ?? 0) > 1,
        },
      ],
      notes: [`${WORKERS} worker processes behind one primary; CPU counts the primary and its workers.`],
    };
  } finally {
    await stopProcess(workers.process);
  }
}
