import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { lockWaiter } from '../support/pg-activity.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import {
  aProduct,
  aProductUnit,
  aQuantity,
  aStackingRule,
  uniqueSku,
  type Json,
  type ProductJson,
} from '../support/builders.js';
import { BASE_URL, createProduct, expectedProduct, HAL_JSON_UTF8, productApi, rowCounts } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

interface Stored {
  pKey: string;
  body: Json & { createDt: string; ol: number; sku: string };
}

/** A Product with every optional field, stored and read back. */
async function aStoredFullProduct(): Promise<Stored & { sent: ProductJson }> {
  const neighbour = aProduct();
  await createProduct(api, neighbour);
  const sent = aProduct({
    label: 'L-1',
    accountId: 'ACC',
    description: 'before',
    availabilityState: 'LOCKED',
    classification: 'hazardous',
    group: 'G1',
    stockZone: 'A',
    overbookingAllowed: true,
    units: [aProductUnit({ code: 'CRT', quantity: aQuantity(2, 'DOZ'), details: { carrierType: 'EURO' } })],
    dimension: { height: 1, length: 2, width: 3, uom: 'CM' },
    stackingRules: [aStackingRule(neighbour.sku, 2)],
    details: { erp: 'X' },
  });
  const pKey = await createProduct(api, sent);
  const { body } = await api.findByPKey(pKey);
  return { pKey, body, sent };
}

function expectNotFoundByPKey(response: Parameters<typeof expectApiDeclined>[0], pKey: string): void {
  expectApiDeclined(response, {
    status: 404,
    message: `No Product with pKey [${pKey}] exists`,
    messageKey: 'owms.wms.inv.product.notFoundByPKey',
    obj: [pKey],
    class: 'String',
  });
}

describe('PUT /v1/products (D12)', () => {
  it('replaces the whole Product: optional fields left out are cleared and units and rules replaced', async () => {
    const stored = await aStoredFullProduct();
    const replacement = aProduct({
      pKey: stored.pKey,
      ol: 0,
      sku: stored.body.sku,
      baseUnit: aQuantity(3, 'PC'),
      units: [
        aProductUnit({ code: 'BOX', quantity: aQuantity(6, 'PC') }),
        aProductUnit({ quantity: aQuantity(1, 'DOZ') }),
      ],
    });

    const response = await api.update(replacement);

    const expected = {
      ...expectedProduct(replacement, { pKey: stored.pKey, createDt: stored.body.createDt, ol: 1 }),
      _links: {
        self: { href: `${BASE_URL}/v1/products/${stored.pKey}` },
        'packaging-units': { href: `${BASE_URL}/v1/packaging-units?sku=${encodeURIComponent(stored.body.sku)}` },
        stock: { href: `${BASE_URL}/v1/stock?sku=${encodeURIComponent(stored.body.sku)}` },
      },
    };
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual(expected);
    expect((await api.findByPKey(stored.pKey)).body).toEqual(response.body);
    const units = await ctx.db.pool.query(
      `SELECT u.code FROM product_unit u JOIN product p ON p.id = u.product_id WHERE p.p_key = $1 ORDER BY u.position`,
      [stored.pKey],
    );
    expect(units.rows).toEqual([{ code: 'BOX' }, { code: null }]);
  });

  it('keeps pKey and createDt and raises ol by one on every update', async () => {
    const stored = await aStoredFullProduct();
    const first = await api.update({ ...stored.sent, pKey: stored.pKey, ol: 0, description: 'one' });
    const second = await api.update({ ...stored.sent, pKey: stored.pKey, ol: 1, description: 'two' });

    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.body.ol, second.body.ol]).toEqual([1, 2]);
    for (const response of [first, second]) {
      expect(response.body.pKey).toBe(stored.pKey);
      expect(response.body.createDt).toBe(stored.body.createDt);
    }
    expect(second.body.description).toBe('two');
  });

  it('ignores a createDt the client sends', async () => {
    const stored = await aStoredFullProduct();
    const response = await api.update({ ...stored.sent, pKey: stored.pKey, createDt: '2001-01-01T00:00:00.000Z' });

    expect(response.status).toBe(200);
    expect(response.body.createDt).toBe(stored.body.createDt);
  });

  it('accepts an update without ol', async () => {
    const stored = await aStoredFullProduct();
    const response = await api.update({ ...stored.sent, pKey: stored.pKey, description: 'no ol sent' });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ description: 'no ol sent', ol: 1 });
  });

  it('renames a Product to a new SKU: the new SKU finds it, the old one no longer does', async () => {
    const stored = await aStoredFullProduct();
    const renamed = `${stored.body.sku}-RENAMED`;
    const response = await api.update({ ...stored.sent, sku: renamed, pKey: stored.pKey, ol: 0 });

    expect(response.status).toBe(200);
    expect((await api.findBySku(renamed)).body.pKey).toBe(stored.pKey);
    expect((await api.findBySku(stored.body.sku)).status).toBe(404);
  });

  it('answers a missing pKey with 400 core.validation.error naming pKey and changes nothing', async () => {
    const stored = await aStoredFullProduct();
    const before = await rowCounts(ctx.db.pool);
    const response = await api.update({ ...stored.sent, description: 'changed' });

    expectValidationError(response, [['pKey', 'required']]);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expect((await api.findByPKey(stored.pKey)).body).toEqual(stored.body);
  });

  it('validates the body as strictly as create, naming every invalid field', async () => {
    const stored = await aStoredFullProduct();
    const response = await api.update({
      ...stored.sent,
      pKey: stored.pKey,
      sku: ' ',
      baseUnit: aQuantity('3'),
      overbookingAllowed: 'false',
    });

    expectValidationError(response, [
      ['sku', 'must not be blank'],
      ['baseUnit.magnitude', 'must be a number'],
      ['overbookingAllowed', 'must be of type boolean'],
    ]);
    expect((await api.findByPKey(stored.pKey)).body).toEqual(stored.body);
  });

  it('answers an unknown pKey with 404 notFoundByPKey naming it', async () => {
    const pKey = randomUUID();

    expectNotFoundByPKey(await api.update(aProduct({ pKey })), pKey);
  });

  it.each(['abc', "'; drop table product;--", 'k'.repeat(1000)])(
    'answers the malformed pKey %s with 404 notFoundByPKey, never 400 or 500',
    async (pKey) => {
      expectNotFoundByPKey(await api.update(aProduct({ pKey })), pKey);
    },
  );

  it('answers a stale ol with 409 resource.changed.unexpectedly and changes nothing', async () => {
    const stored = await aStoredFullProduct();
    await api.update({ ...stored.sent, pKey: stored.pKey, ol: 0 }).expect(200);
    const current = (await api.findByPKey(stored.pKey)).body;

    const response = await api.update({ ...stored.sent, pKey: stored.pKey, ol: 0, description: 'lost update' });

    expectApiDeclined(response, {
      status: 409,
      message: `Product [${stored.pKey}] was changed by someone else in the meantime; read it again and retry`,
      messageKey: 'resource.changed.unexpectedly',
      obj: [stored.pKey],
      class: 'String',
    });
    expect((await api.findByPKey(stored.pKey)).body).toEqual(current);
  });

  it('answers a rename to an existing SKU with 409 alreadyExists and changes nothing', async () => {
    const stored = await aStoredFullProduct();
    const other = aProduct();
    await createProduct(api, other);

    const response = await api.update({ ...stored.sent, sku: other.sku, pKey: stored.pKey, ol: 0 });

    expectApiDeclined(response, {
      status: 409,
      message: `Products with SKU [${other.sku}] already exist`,
      messageKey: 'owms.wms.inv.product.alreadyExists',
      obj: [other.sku],
      class: 'String',
    });
    expect((await api.findByPKey(stored.pKey)).body).toEqual(stored.body);
  });

  it('answers 409 alreadyExists for a rename to a SKU another transaction creates meanwhile', async () => {
    const stored = await aStoredFullProduct();
    const sku = uniqueSku('RACED');
    // Another writer holds the new SKU uncommitted: the rename passes any check before it and waits on the index.
    const other = await ctx.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query("INSERT INTO product (sku, base_unit_magnitude, base_unit_code) VALUES ($1, 1, 'PC')", [sku]);
      const renamed = api.update({ ...stored.sent, sku, pKey: stored.pKey, ol: 0 }).then((response) => response);
      await lockWaiter(ctx.db.pool, 'UPDATE product');
      await other.query('COMMIT');

      expectApiDeclined(await renamed, {
        status: 409,
        message: `Products with SKU [${sku}] already exist`,
        messageKey: 'owms.wms.inv.product.alreadyExists',
        obj: [sku],
        class: 'String',
      });
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      other.release();
    }
    expect((await api.findByPKey(stored.pKey)).body).toEqual(stored.body);
  });

  it('answers stacking rules naming an unknown Product with a 400 naming the rule', async () => {
    const stored = await aStoredFullProduct();
    const response = await api.update({
      ...stored.sent,
      pKey: stored.pKey,
      stackingRules: [aStackingRule('NOT-THERE')],
    });

    expectValidationError(response, [['stackingRules[0].allowedProduct.sku', "unknown product 'NOT-THERE'"]]);
    expect((await api.findByPKey(stored.pKey)).body).toEqual(stored.body);
  });

  it('answers a rename that leaves a stacking rule naming the old SKU with a 400, never dropping the rule', async () => {
    const product = aProduct();
    product.stackingRules = [aStackingRule(product.sku, 2)];
    const pKey = await createProduct(api, product);
    const before = (await api.findByPKey(pKey)).body;

    const response = await api.update({ ...product, sku: `${product.sku}-NEW`, pKey });

    expectValidationError(response, [['stackingRules[0].allowedProduct.sku', `unknown product '${product.sku}'`]]);
    expect((await api.findByPKey(pKey)).body).toEqual(before);
  });

  it('lets exactly one of two concurrent updates with the same ol win', async () => {
    const stored = await aStoredFullProduct();
    const responses = await Promise.all(
      ['left', 'right'].map((description) => api.update({ ...stored.sent, pKey: stored.pKey, ol: 0, description })),
    );

    expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    const winner = responses.find((response) => response.status === 200);
    const current = (await api.findByPKey(stored.pKey)).body;
    expect(current.ol).toBe(1);
    expect(current.description).toBe(winner?.body.description);
    expect(responses.find((response) => response.status === 409)?.body.messageKey).toBe(
      'resource.changed.unexpectedly',
    );
  });
});
