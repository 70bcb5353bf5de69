import { compareReads } from './read-comparison.js';
import type { BenchContext, ScenarioResult } from './results.js';
import { productSku } from './seed.js';

/** Scenario 1: GET /v1/products?sku= on the seeded products, with auth and logging on. */
export function productsBySku(bench: BenchContext): Promise<ScenarioResult> {
  const products = bench.config.products;
  return compareReads({
    bench,
    id: 1,
    title: `GET /v1/products?sku= on ${products.toLocaleString('en-US')} products`,
    next: () => {
      const sku = productSku('P', 1 + Math.floor(Math.random() * products));
      return { service: { path: `/v1/products?sku=${sku}` }, ceiling: { path: `/products?sku=${sku}` } };
    },
  });
}
