import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined } from '../support/api-errors.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule } from '../support/builders.js';
import { bearer } from '../support/tokens.js';
import { createProduct, HAL_JSON_UTF8, productApi, rowCounts, skuCount } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

function expectNotFoundByPKey(response: Parameters<typeof expectApiDeclined>[0], pKey: string): void {
  expectApiDeclined(response, {
    status: 404,
    message: `No Product with pKey [${pKey}] exists`,
    messageKey: 'owms.wms.inv.product.notFoundByPKey',
    obj: [pKey],
    class: 'String',
  });
}

describe('DELETE /v1/products/{pKey} (D13)', () => {
  it('answers 204 without a body and the Product is gone', async () => {
    const product = aProduct({ details: { erp: 'X' } });
    const pKey = await createProduct(api, product);

    const response = await api.remove(pKey);

    expect({ status: response.status, text: response.text, type: response.headers['content-type'] }).toEqual({
      status: 204,
      text: '',
      type: undefined,
    });
    expect(await skuCount(ctx.db.pool, [product.sku])).toBe(0);
    expect((await api.findByPKey(pKey)).status).toBe(404);
    expect((await api.findBySku(product.sku)).status).toBe(404);
  });

  it('answers a Product that has units with 403 whose body is only a message, and keeps it', async () => {
    const product = aProduct({ units: [aProductUnit()] });
    const pKey = await createProduct(api, product);
    const before = await rowCounts(ctx.db.pool);

    const response = await api.remove(pKey);

    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      message: `Product [${product.sku}] cannot be deleted: it is still used by unit of measure definitions`,
    });
    expect(Object.keys(response.body as object)).toEqual(['message']);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it("answers a Product named in another Product's stacking rules with 403 whose body is only a message", async () => {
    const allowed = aProduct();
    const allowedPKey = await createProduct(api, allowed);
    await createProduct(api, aProduct({ stackingRules: [aStackingRule(allowed.sku)] }));

    const response = await api.remove(allowedPKey);

    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      message: `Product [${allowed.sku}] cannot be deleted: it is still used by stacking rules of other products`,
    });
    expect(await skuCount(ctx.db.pool, [allowed.sku])).toBe(1);
  });

  it('answers 403 while a PackagingUnit of it exists, and still while a LoadUnit stays assigned to it', async () => {
    const product = aProduct();
    const pKey = await createProduct(api, product);
    const created = await request(ctx.app)
      .post('/v1/transport-units/TU-DELETE-1/load-units/1/packaging-units?loadUnitType=PALLET')
      .set('Authorization', bearer())
      .send({ packagingUnits: [{ product: { sku: product.sku }, quantity: aQuantity(5) }] })
      .expect(201);

    const withStock = await api.remove(pKey);
    expect(withStock.status).toBe(403);
    expect(withStock.body).toEqual({
      message: `Product [${product.sku}] cannot be deleted: it is still used by PackagingUnits and LoadUnits`,
    });

    await request(ctx.app)
      .delete(`/v1/packaging-units/${String(created.body[0].pKey)}`)
      .set('Authorization', bearer())
      .expect(204);
    const assigned = await api.remove(pKey);
    expect(assigned.status).toBe(403);
    expect(assigned.body).toEqual({
      message: `Product [${product.sku}] cannot be deleted: it is still used by LoadUnits`,
    });
    expect(await skuCount(ctx.db.pool, [product.sku])).toBe(1);
  });

  it('deletes a Product together with its own stacking rules, which then frees the Product they named', async () => {
    const allowed = aProduct();
    const allowedPKey = await createProduct(api, allowed);
    const stacking = aProduct({ stackingRules: [aStackingRule(allowed.sku)] });
    const stackingPKey = await createProduct(api, stacking);

    expect((await api.remove(stackingPKey)).status).toBe(204);
    expect((await api.remove(allowedPKey)).status).toBe(204);
    expect(await skuCount(ctx.db.pool, [allowed.sku, stacking.sku])).toBe(0);
  });

  it('answers a Product deleted twice with 404 the second time', async () => {
    const pKey = await createProduct(api, aProduct());

    expect((await api.remove(pKey)).status).toBe(204);
    expectNotFoundByPKey(await api.remove(pKey), pKey);
  });

  it('answers an unknown pKey with 404 notFoundByPKey naming it', async () => {
    const pKey = randomUUID();

    expectNotFoundByPKey(await api.remove(pKey), pKey);
  });

  it.each([
    ['abc', 'abc'],
    ['an SQL fragment', "'; drop table product;--"],
    ['1000 characters', 'k'.repeat(1000)],
  ])('answers a malformed pKey (%s) with 404 notFoundByPKey, never 400 or 500', async (_what, pKey) => {
    const before = await rowCounts(ctx.db.pool);

    expectNotFoundByPKey(await api.remove(encodeURIComponent(pKey)), pKey);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('answers a pKey with a broken percent escape with a 404, never 400 or 500', async () => {
    const response = await api.remove('%zz');

    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.product.notFoundByPKey', httpStatus: '404' });
  });
});
