import type pg from 'pg';
import { MIXED_PREFIX, mixedStock } from '../bench/scenario-6-mixed.js';
import { productSku, sampleUnitKeys, seedMasterData, seedProducts, seedStock, settle } from '../bench/seed.js';

/**
 * The benchmark's mixed workload (scenario 6) at a smaller read set: the soak is about faults, not about how
 * large the tables are, and a smaller seed starts the run in seconds.
 */
export const READ_PRODUCTS = 10_000;
const READ_STOCK = { tuPrefix: 'TU', loadUnits: 1000, unitsPerLoadUnit: 10, unitQuantity: 10 } as const;
const UNIT_SAMPLE = 10_000;

/** A read every instance answers 200 once it can reach the database. */
export const PROBE_PATH = `/v1/products?sku=${productSku(MIXED_PREFIX, 1)}`;

/** Master data, the read set and the mixed Products' stock, seeded set-based; answers the unit keys to read. */
export async function seedSoakStock(pool: pg.Pool): Promise<string[]> {
  await seedMasterData(pool);
  await seedProducts(pool, 'P', 1, READ_PRODUCTS);
  await seedStock(pool, { productPrefix: 'P', products: READ_PRODUCTS, ...READ_STOCK });
  await seedProducts(pool, mixedStock.productPrefix, 1, mixedStock.products);
  await seedStock(pool, mixedStock);
  await settle(pool);
  return sampleUnitKeys(pool, READ_STOCK.tuPrefix, UNIT_SAMPLE);
}
