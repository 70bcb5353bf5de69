import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  loadUnitPart,
  loadUnitPKey,
  locationPart,
  productPart,
  STOCK_BASE,
  stockApi,
  uniqueKey,
  unitView,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const HAL = 'application/hal+json';

/** Issue 13: a PackagingUnit list reached by a HAL link answers HAL when that is asked for. */
let product: SeededProduct;
let bk: string;
let lu: string;
let inLu: UnitJson[];
let onLocation: UnitJson;
let locationId: string;

beforeAll(async () => {
  product = await givenProduct(ctx);
  bk = uniqueKey('TU');
  inLu = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 3)]);
  lu = await loadUnitPKey(ctx.db.pool, bk, '1');
  ({ locationId } = await givenLocation(ctx));
  onLocation = await givenUnitOnLocation(ctx, product.sku, locationId, 4);
});

const inLoadUnit = (): unknown =>
  unitView({
    pKey: inLu[0]!.pKey,
    product: productPart(product),
    quantity: aQuantity(3),
    loadUnit: loadUnitPart(lu, bk, '1'),
    _links: {
      self: { href: `${STOCK_BASE}/v1/packaging-units/${inLu[0]!.pKey}` },
      loadUnit: { href: `${STOCK_BASE}/v1/load-units/${lu}` },
      transportUnit: { href: `${STOCK_BASE}/v1/transport-units?bk=${bk}` },
      product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
    },
  });

describe('PackagingUnit lists as HAL', () => {
  it("answers a Product's packaging-units link with the units as resources under _embedded, and self", async () => {
    const productResponse = await api.get(`/v1/products/${product.pKey}`);
    const link = (productResponse.body as { _links: Record<string, { href: string }> })._links['packaging-units']!;
    const path = link.href.slice(STOCK_BASE.length);

    const response = await api.get(path, HAL);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const onLocationResource = unitView({
      pKey: onLocation.pKey,
      product: productPart(product),
      quantity: aQuantity(4),
      actualLocation: await locationPart(ctx, locationId),
      _links: {
        self: { href: `${STOCK_BASE}/v1/packaging-units/${onLocation.pKey}` },
        product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
      },
    });
    expect(response.body).toEqual({
      _embedded: { 'packaging-units': [inLoadUnit(), onLocationResource] },
      _links: { self: { href: link.href } },
    });
  });

  it.each([
    ['lu-findpuinlu', () => `/v1/load-units/${lu}/packaging-units`],
    ['packaging-units-findontuandlu', () => `/v1/transport-units/${bk}/load-units/1/packaging-units`],
    ['packaging-units-findontu', () => `/v2/transport-units/${bk}/load-units/packaging-units`],
  ])('%s answers HAL when it is named', async (_name, path) => {
    const response = await api.get(path(), HAL);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      _embedded: { 'packaging-units': [inLoadUnit()] },
      _links: { self: { href: `${STOCK_BASE}${path()}` } },
    });
  });

  it.each([[undefined], ['*/*'], ['application/*']])('keeps the plain array for Accept %s', async (accept) => {
    const response = await api.get(`/v1/load-units/${lu}/packaging-units`, accept);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(Array.isArray(response.body)).toBe(true);
  });

  it('an empty list is HAL with an empty _embedded list', async () => {
    const path = `/v1/transport-units/${uniqueKey('TU')}/load-units/packaging-units`;

    const response = await api.get(path, HAL);

    expect(response.body).toEqual({
      _embedded: { 'packaging-units': [] },
      _links: { self: { href: `${STOCK_BASE}${path}` } },
    });
  });
});
