import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, type Json, type ProductJson } from '../support/builders.js';
import { expectedProduct, JSON_UTF8, productApi, rowCounts } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

const COUNT = 100_000;
const SAMPLE = [0, 1, 9, 10, 12_345, 50_000, 99_990, COUNT - 1];

/** Every tenth Product carries two units; the others vary in the optional fields they send. */
function bulkProduct(index: number): ProductJson {
  const sku = `BULK-${String(index).padStart(6, '0')}`;
  if (index % 10 === 0) {
    return aProduct({
      sku,
      baseUnit: aQuantity(1, 'PC'),
      units: [
        aProductUnit({ code: 'CRT', quantity: aQuantity(2, 'DOZ') }),
        aProductUnit({ quantity: aQuantity(6, 'PC') }),
      ],
    });
  }
  return aProduct({
    sku,
    baseUnit: index % 2 === 0 ? aQuantity((index % 1000) + 0.5, 'KG') : aQuantity(1, 'PC'),
    description: `Bulk product ${index}`,
    stockZone: (['A', 'B', 'C'] as const)[index % 3],
    details: { erpId: index },
  });
}

function log(message: string): void {
  // eslint-disable-next-line no-console -- the README reports these timings
  console.log(message);
}

describe('bulk creation (D10, D11)', () => {
  it(`creates ${COUNT} Products in one request and reads them all back through the streamed list`, async () => {
    const products = Array.from({ length: COUNT }, (_, index) => bulkProduct(index));
    const body = JSON.stringify(products);

    const createStart = performance.now();
    const created = await api.createRaw(body);
    const createMs = performance.now() - createStart;

    expect(created.status).toBe(201);
    expect(created.headers.location).toBeUndefined();
    expect(await rowCounts(ctx.db.pool)).toEqual({ products: COUNT, units: 2 * (COUNT / 10), stackingRules: 0 });

    const readStart = performance.now();
    const listed = await api.find();
    const readMs = performance.now() - readStart;

    log(
      `bulk: created ${COUNT} products (${(body.length / 1e6).toFixed(1)} MB) in ${createMs.toFixed(0)} ms; ` +
        `read them back (${(listed.text.length / 1e6).toFixed(1)} MB) in ${readMs.toFixed(0)} ms`,
    );
    expect(listed.status).toBe(200);
    expect(listed.headers['content-type']).toBe(JSON_UTF8);
    const all = listed.body as Json[];
    expect(all).toHaveLength(COUNT);
    expect(new Set(all.map((product) => product.sku)).size).toBe(COUNT);

    const bySku = new Map(all.map((product) => [product.sku, product]));
    const sampled = SAMPLE.map((index) => products[index] as ProductJson);
    const stored = await ctx.db.pool.query<{ sku: string; pKey: string; createDt: Date }>(
      'SELECT sku, p_key::text AS "pKey", create_dt AS "createDt" FROM product WHERE sku = ANY($1)',
      [sampled.map((product) => product.sku)],
    );
    expect(stored.rows).toHaveLength(SAMPLE.length);
    for (const row of stored.rows) {
      const sent = sampled.find((product) => product.sku === row.sku) as ProductJson;
      expect(bySku.get(row.sku)).toEqual(
        expectedProduct(sent, { pKey: row.pKey, createDt: row.createDt.toISOString() }),
      );
    }
  }, 180_000);
});
