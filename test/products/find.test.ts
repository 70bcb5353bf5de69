import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { aProduct, aProductUnit, aQuantity, type ProductJson } from '../support/builders.js';
import { bearer } from '../support/tokens.js';
import {
  BASE_URL,
  createProduct,
  expectEmptyNotFound,
  expectedProduct,
  HAL_JSON_UTF8,
  ISO_UTC_MILLIS,
  JSON_UTF8,
  productApi,
  withoutLinks,
} from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

const MALFORMED_KEYS: readonly (readonly [string, string])[] = [
  ['abc', 'abc'],
  ['an SQL fragment', "'; drop table product;--"],
  ['1000 characters', 'k'.repeat(1000)],
  ['a UUID with a trailing character', `${randomUUID()}x`],
];

function expectNotFoundByPKey(response: request.Response, pKey: string): void {
  expectApiDeclined(response, {
    status: 404,
    message: `No Product with pKey [${pKey}] exists`,
    messageKey: 'owms.wms.inv.product.notFoundByPKey',
    obj: [pKey],
    class: 'String',
  });
}

let dozens: ProductJson;
let dozensPKey: string;

beforeAll(async () => {
  dozens = aProduct({
    baseUnit: aQuantity(1, 'PC'),
    units: [
      aProductUnit({ code: 'CRT', quantity: aQuantity(2, 'DOZ') }),
      aProductUnit({ quantity: aQuantity(6, 'PC') }),
    ],
  });
  dozensPKey = await createProduct(api, dozens);
});

describe('GET /v1/products?sku= (D11)', () => {
  it('answers a known SKU with 200 application/hal+json and the Product with its self link', async () => {
    const response = await api.findBySku(dozens.sku);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      ...expectedProduct(dozens, { pKey: dozensPKey, createDt: expect.stringMatching(ISO_UTC_MILLIS) }),
      _links: {
        self: { href: `${BASE_URL}/v1/products/${dozensPKey}` },
        'packaging-units': { href: `${BASE_URL}/v1/packaging-units?sku=${encodeURIComponent(dozens.sku)}` },
        stock: { href: `${BASE_URL}/v1/stock?sku=${encodeURIComponent(dozens.sku)}` },
      },
    });
  });

  it('answers an unknown SKU with 404 and exactly message, messageKey not.found and httpStatus', async () => {
    const response = await api.findBySku('NO-SUCH-SKU');

    expectApiDeclined(response, {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });

  it('answers uom without sku with 400 core.validation.error naming uom', async () => {
    const response = await api.find('?uom=PC');

    expectValidationError(response, [['uom', 'uom needs sku']]);
  });
});

describe('GET /v1/products/{pKey} (D11)', () => {
  it('answers a known pKey with 200 application/hal+json and the same Product as the SKU lookup', async () => {
    const byPKey = await api.findByPKey(dozensPKey);
    const bySku = await api.findBySku(dozens.sku);

    expect(byPKey.status).toBe(200);
    expect(byPKey.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(byPKey.body).toEqual(bySku.body);
  });

  it('finds a Product by its pKey written in upper case', async () => {
    const response = await api.findByPKey(dozensPKey.toUpperCase());

    expect(response.status).toBe(200);
    expect(response.body.pKey).toBe(dozensPKey);
  });

  it('answers an unknown pKey with 404 notFoundByPKey naming it', async () => {
    const pKey = randomUUID();

    expectNotFoundByPKey(await api.findByPKey(pKey), pKey);
  });

  it.each(MALFORMED_KEYS)('answers a malformed pKey (%s) with the same 404, never 400 or 500', async (_what, pKey) => {
    expectNotFoundByPKey(await api.findByPKey(encodeURIComponent(pKey)), pKey);
  });

  it.each(['%zz', '%E0%A4%A'])(
    'answers a pKey with a broken percent escape (%s) with a 404, never 400 or 500',
    async (raw) => {
      const response = await api.findByPKey(raw);

      expect({ status: response.status, type: response.headers['content-type'] }).toEqual({
        status: 404,
        type: HAL_JSON_UTF8,
      });
      expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.product.notFoundByPKey', httpStatus: '404' });
    },
  );
});

describe('GET /v1/products?sku=&uom= (D2, D11)', () => {
  it.each([
    ['the base unit code', 'PC'],
    ['a unit quantity code', 'DOZ'],
    ['exactly a unit quantity, + as the space', '2+DOZ'],
    ['exactly a unit quantity, %20 as the space', '2%20DOZ'],
    ['exactly a second unit quantity', '6+PC'],
    ['exactly the base unit quantity', '1+PC'],
    ['an amount written with decimals', '2.000+DOZ'],
  ])('answers a UOM matching %s (%s) with 200 and the Product with all its units', async (_what, uom) => {
    const response = await api.find(`?sku=${encodeURIComponent(dozens.sku)}&uom=${uom}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual((await api.findByPKey(dozensPKey)).body);
    expect(response.body.units).toHaveLength(2);
  });

  it.each([
    ['an amount no unit has', '3+DOZ'],
    ['a valid code the Product does not use', 'KG'],
    ['an amount the base unit does not have', '5+PC'],
  ])('answers a valid UOM the Product does not have (%s: %s) with 404 and an empty body', async (_what, uom) => {
    expectEmptyNotFound(await api.find(`?sku=${encodeURIComponent(dozens.sku)}&uom=${uom}`));
  });

  // An empty uom is no uom (issue 13): test/http/empty-query-parameters.test.ts.
  it.each(['PCS', 'pc', 'x+PC', '-1+PC', '0+PC', '1e2+PC', '2++DOZ', '+DOZ', '2+', '1.0000001+PC'])(
    'answers the invalid UOM expression "%s" with 404 and an empty body',
    async (uom) => {
      expectEmptyNotFound(await api.find(`?sku=${encodeURIComponent(dozens.sku)}&uom=${uom}`));
    },
  );

  it('answers an unknown SKU with a UOM with the not.found body of the SKU lookup', async () => {
    const response = await api.find('?sku=NO-SUCH-SKU&uom=PC');

    expectApiDeclined(response, {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });
});

describe('GET /v1/products (D11)', () => {
  it('answers with an application/json array of every Product, each without _links', async () => {
    const other = aProduct({ description: 'second' });
    const otherPKey = await createProduct(api, other);

    const response = await api.find();

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    const single = await Promise.all([api.findByPKey(dozensPKey), api.findByPKey(otherPKey)]);
    expect(response.body).toEqual(expect.arrayContaining(single.map((each) => withoutLinks(each.body))));
    const count = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product');
    expect(response.body).toHaveLength(count.rows[0]?.n ?? -1);
    for (const product of response.body as object[]) expect(product).not.toHaveProperty('_links');
  });

  describe('on an empty database', () => {
    const empty = useTestApp();

    it('answers with an empty application/json array', async () => {
      const response = await request(empty.app).get('/v1/products').set('Authorization', bearer());

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(JSON_UTF8);
      expect(response.text).toBe('[]');
    });
  });
});
