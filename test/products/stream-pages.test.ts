import { describe, expect, it } from 'vitest';
import { STREAM_PAGE_SIZE } from '../../src/http/stream.js';
import { useTestApp } from '../support/app.js';
import {
  aProduct,
  aProductUnit,
  aQuantity,
  aStackingRule,
  uniqueSku,
  type Json,
  type ProductJson,
} from '../support/builders.js';
import { expectedProduct, JSON_UTF8, productApi } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

/** Products that use every field the list renders: units, stacking rules, dimensions, details, optional fields. */
function variedProducts(count: number, batch: string): ProductJson[] {
  const products: ProductJson[] = [];
  for (let index = 0; index < count; index++) {
    const sku = uniqueSku(`PAGES-${batch}`);
    const withUnits = index % 3 === 0;
    // Units are of the base unit's kind: the others weigh, with magnitudes that have decimals.
    const fields: Json = { sku, baseUnit: withUnits ? aQuantity(1, 'PC') : aQuantity(index + 0.25, 'KG') };
    if (withUnits) {
      fields.units = [
        aProductUnit({ label: `carton ${index}`, code: 'CRT', quantity: aQuantity(2, 'DOZ') }),
        aProductUnit({
          description: 'layer',
          quantity: aQuantity(6, 'PC'),
          dimension: { height: 1, length: 2.5, width: 3, uom: 'M' },
          details: { z: 1, a: [true, null] },
        }),
      ];
    }
    if (index % 5 === 1) fields.stackingRules = [aStackingRule(products[index - 1]!.sku, index % 4)];
    if (index % 4 === 2) {
      Object.assign(fields, {
        label: `Label ${index}`,
        accountId: 'ACC',
        description: `Product ${index} "quoted" \\ ünïcödé`,
        availabilityState: 'QC_LOCKED',
        classification: 'FOOD',
        group: 'G1',
        stockZone: 'B',
        overbookingAllowed: true,
        dimension: { height: null, width: 0.5 },
        details: { erpId: index, nested: { b: 2, a: 1 } },
      });
    }
    products.push(aProduct(fields));
  }
  return products;
}

/** The list as the former single-snapshot stream rendered it: every Product in creation order, in plain JSON. */
async function expectedList(sent: readonly ProductJson[]): Promise<string> {
  const { rows } = await ctx.db.pool.query<{ sku: string; pKey: string; createDt: Date; unitPKeys: string[] }>(
    `SELECT p.sku, p.p_key::text AS "pKey", p.create_dt AS "createDt",
            ARRAY(SELECT u.p_key::text FROM product_unit u WHERE u.product_id = p.id ORDER BY u.position) AS "unitPKeys"
       FROM product p`,
  );
  const stored = new Map(rows.map((row) => [row.sku, row]));
  const present = sent.filter((product) => stored.has(product.sku));
  return JSON.stringify(
    present.map((product) => {
      const row = stored.get(product.sku)!;
      return expectedProduct(product, {
        pKey: row.pKey,
        createDt: row.createDt.toISOString(),
        unitPKeys: row.unitPKeys,
      });
    }),
  );
}

describe('GET /v1/products read in keyset pages (issue 15)', () => {
  it('answers exactly the JSON array of every Product in creation order, at and across page boundaries', async () => {
    const first = variedProducts(4 * STREAM_PAGE_SIZE, 'A');
    expect((await api.create(first)).status).toBe(201);

    // Exactly four full pages: the last page read is empty.
    const fullPages = await api.find();
    expect(fullPages.status).toBe(200);
    expect(fullPages.headers['content-type']).toBe(JSON_UTF8);
    expect(fullPages.text).toBe(await expectedList(first));

    // Gaps in the keys (deleted Products) and a last page that is not full.
    const second = variedProducts(STREAM_PAGE_SIZE * 2 + 345, 'B');
    expect((await api.create(second)).status).toBe(201);
    const stacked = new Set(
      [...first, ...second].flatMap((product) =>
        ((product.stackingRules ?? []) as ReturnType<typeof aStackingRule>[]).map((rule) => rule.allowedProduct.sku),
      ),
    );
    const deleted = [...first, ...second].filter((product, index) => index % 97 === 3 && !stacked.has(product.sku));
    const removed = await ctx.db.pool.query('DELETE FROM product WHERE sku = ANY($1)', [
      deleted.map((product) => product.sku),
    ]);
    expect(removed.rowCount).toBe(deleted.length);

    const all = await api.find();
    const expected = await expectedList([...first, ...second]);
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(first.length + second.length - deleted.length);
    expect(all.text).toBe(expected);
  }, 60_000);
});
