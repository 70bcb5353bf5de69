import type pg from 'pg';
import { pick, type PlannedRequest } from '../bench/load.js';
import { allocationBody } from '../bench/scenario-4-allocation.js';
import { MIXED_PREFIX, mixedMoveRequest, mixedStock } from '../bench/scenario-6-mixed.js';
import { productSku, sampleUnitKeys, seedMasterData, seedProducts, seedStock, settle } from '../bench/seed.js';

/**
 * The benchmark's mixed workload (scenario 6) at a smaller read set: the soak is about faults, not about how
 * large the tables are, and a smaller seed starts the run in seconds.
 */
const READ_PREFIX = 'P';
const READ_PRODUCTS = 10_000;
const READ_STOCK = { tuPrefix: 'TU', loadUnits: 1000, unitsPerLoadUnit: 10, unitQuantity: 10 } as const;
const UNIT_SAMPLE = 10_000;

/** A read every instance answers 200 once it can reach the database. */
export const PROBE_PATH = `/v1/products?sku=${productSku(MIXED_PREFIX, 1)}`;

/** Master data, the read set and the mixed Products' stock, seeded set-based; answers the unit keys to read. */
export async function seedSoakStock(pool: pg.Pool): Promise<string[]> {
  await seedMasterData(pool);
  await seedProducts(pool, READ_PREFIX, 1, READ_PRODUCTS);
  await seedStock(pool, { productPrefix: READ_PREFIX, products: READ_PRODUCTS, ...READ_STOCK });
  await seedProducts(pool, mixedStock.productPrefix, 1, mixedStock.products);
  await seedStock(pool, mixedStock);
  await settle(pool);
  return sampleUnitKeys(pool, READ_STOCK.tuPrefix, UNIT_SAMPLE);
}

/** 70 % reads (products by SKU, units by pKey), 20 % moves, 10 % allocations of 1-3 PC of a mixed Product. */
export function mixedRequests(unitKeys: readonly string[]): () => PlannedRequest {
  return () => {
    const dice = Math.random();
    if (dice < 0.35) {
      const sku = productSku(READ_PREFIX, 1 + Math.floor(Math.random() * READ_PRODUCTS));
      return { path: `/v1/products?sku=${sku}`, kind: 'read product' };
    }
    if (dice < 0.7) return { path: `/v1/packaging-units/${pick(unitKeys)}`, kind: 'read unit' };
    if (dice < 0.9) return mixedMoveRequest();
    const pieces = 1 + Math.floor(Math.random() * 3);
    const sku = productSku(MIXED_PREFIX, 1 + Math.floor(Math.random() * mixedStock.products));
    return { method: 'POST', path: '/allocation/transport-units', body: allocationBody(sku, pieces), kind: 'allocate' };
  };
}
