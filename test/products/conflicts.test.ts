import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { aProduct, aStackingRule, uniqueSku } from '../support/builders.js';
import { createProduct, productApi, rowCounts, skuCount } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

function expectAlreadyExists(response: Parameters<typeof expectApiDeclined>[0], skus: readonly string[]): void {
  expectApiDeclined(response, {
    status: 409,
    message: `Products with SKU [${skus.join(', ')}] already exist`,
    messageKey: 'owms.wms.inv.product.alreadyExists',
    obj: skus,
    class: 'String',
  });
}

describe('POST /v1/products conflicts (D10)', () => {
  it('answers an existing SKU with 409 alreadyExists naming it and stores nothing of that request', async () => {
    const existing = aProduct();
    await createProduct(api, existing);
    const fresh = aProduct();
    const before = await rowCounts(ctx.db.pool);

    const response = await api.create([fresh, aProduct({ sku: existing.sku, description: 'second try' })]);

    expectAlreadyExists(response, [existing.sku]);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expect(await skuCount(ctx.db.pool, [fresh.sku])).toBe(0);
    expect((await api.findBySku(existing.sku)).body.description).toBeUndefined();
  });

  it('answers the same SKU twice in one request with 409 alreadyExists and stores nothing', async () => {
    const twice = uniqueSku('TWICE');
    const fresh = aProduct();
    const before = await rowCounts(ctx.db.pool);

    const response = await api.create([aProduct({ sku: twice }), fresh, aProduct({ sku: twice })]);

    expectAlreadyExists(response, [twice]);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('names every conflicting SKU, stored and repeated alike, in one 409', async () => {
    const existing = aProduct();
    await createProduct(api, existing);
    const twice = uniqueSku('TWICE');
    const before = await rowCounts(ctx.db.pool);

    const response = await api.create([
      aProduct({ sku: existing.sku }),
      aProduct({ sku: twice }),
      aProduct({ sku: twice }),
    ]);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expect(response.status).toBe(409);
    expect([...(response.body.obj as string[])].sort()).toEqual([existing.sku, twice].sort());
  });

  it('lets exactly one of two concurrent creates of the same SKU win: one 201, one 409, one row', async () => {
    const sku = uniqueSku('RACE');
    const responses = await Promise.all([
      api.create([aProduct({ sku, description: 'first' })]),
      api.create([aProduct({ sku, description: 'second' })]),
    ]);

    expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    const loser = responses.find((response) => response.status === 409);
    if (loser) expectAlreadyExists(loser, [sku]);
    expect(await skuCount(ctx.db.pool, [sku])).toBe(1);
  });

  it('lets exactly one of many concurrent overlapping bulk creates win for each SKU', async () => {
    const skus = Array.from({ length: 20 }, () => uniqueSku('OVERLAP'));
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => api.create(skus.map((sku) => aProduct({ sku })))),
    );

    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409]);
    expect(await skuCount(ctx.db.pool, skus)).toBe(20);
  });
});

describe('stacking rules (D10)', () => {
  it('accepts a rule naming a Product of the same request, in any order, and gives the rules back as sent', async () => {
    const base = aProduct();
    const top = aProduct();
    const stacked = aProduct({ stackingRules: [aStackingRule(top.sku, 2), aStackingRule(base.sku, 0)] });

    const response = await api.create([stacked, top, base]);

    expect(response.status).toBe(201);
    const { body } = await api.findBySku(stacked.sku);
    expect(body.stackingRules).toEqual([
      { noProducts: 2, allowedProduct: { sku: top.sku } },
      { noProducts: 0, allowedProduct: { sku: base.sku } },
    ]);
  });

  it('accepts a rule naming a stored Product', async () => {
    const stored = aProduct();
    await createProduct(api, stored);
    const stacked = aProduct({ stackingRules: [aStackingRule(stored.sku, 5)] });

    const pKey = await createProduct(api, stacked);

    expect((await api.findByPKey(pKey)).body.stackingRules).toEqual([
      { noProducts: 5, allowedProduct: { sku: stored.sku } },
    ]);
  });

  it('accepts a rule naming the Product itself', async () => {
    const product = aProduct();
    product.stackingRules = [aStackingRule(product.sku, 4)];

    const pKey = await createProduct(api, product);

    expect((await api.findByPKey(pKey)).body.stackingRules).toEqual([
      { noProducts: 4, allowedProduct: { sku: product.sku } },
    ]);
  });

  it('answers rules naming unknown Products with a 400 naming each rule path and stores nothing', async () => {
    const stored = aProduct();
    await createProduct(api, stored);
    const before = await rowCounts(ctx.db.pool);

    const response = await api.create([
      aProduct(),
      aProduct({ stackingRules: [aStackingRule(stored.sku), aStackingRule('NOT-THERE')] }),
      aProduct({ stackingRules: [aStackingRule('ALSO-MISSING', 2)] }),
    ]);

    expectValidationError(response, [
      ['[1].stackingRules[1].allowedProduct.sku', "unknown product 'NOT-THERE'"],
      ['[2].stackingRules[0].allowedProduct.sku', "unknown product 'ALSO-MISSING'"],
    ]);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('names the rule path without an index when one Product was sent as a plain object', async () => {
    const response = await api.create(aProduct({ stackingRules: [aStackingRule('NOT-THERE')] }));

    expectValidationError(response, [['stackingRules[0].allowedProduct.sku', "unknown product 'NOT-THERE'"]]);
  });
});
