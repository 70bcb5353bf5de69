import { describe, expect, it } from 'vitest';
import { expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { givenProduct, stockApi, storedUnitsOf, uniqueKey } from '../support/stock.js';

/**
 * Issue 15: a finder ignored parameters it did not know, so `?SKU=A1` answered every Product (19.6 MB). A query
 * parameter an operation does not take is now a 400 naming it and the parameters the operation does take.
 */
const ctx = useTestApp();
const api = stockApi(ctx);

const takes = (...names: string[]): string => `is not a parameter of this operation, which takes ${names.join(', ')}`;
const PACKAGING_UNIT_SEARCH = ['sku', 'productPKey', 'locationGroupName', 'locationId'];
const SORTING = ['sortDirection', 'sortProperty', 'amount'];

describe('a query parameter the operation does not take', () => {
  it.each([
    ['/v1/products?SKU=A1', 'SKU'],
    ['/v1/products?skus=A1', 'skus'],
    ['/v1/products?sku%5B%5D=A1', 'sku[]'],
    ['/v1/products?sku=A1&uom=PC&page=1', 'page'],
  ])('GET %s answers 400 naming %s and the parameters sku, uom, limit, after', async (path, name) => {
    expectValidationError(await api.get(path), [[name, takes('sku', 'uom', 'limit', 'after')]]);
  });

  it.each([
    ['/v1/location-groups?nme=X', 'nme', ['name']],
    ['/v1/locations?locationID=X', 'locationID', ['locationId', 'erpCode']],
    ['/v1/transport-units?BK=X', 'BK', ['bk']],
    ['/v1/packaging-units?skU=X', 'skU', [...PACKAGING_UNIT_SEARCH, ...SORTING]],
    ['/v1/events?from=1', 'from', ['after', 'limit', 'wait']],
  ])('GET %s answers 400 naming %s and what the finder takes', async (path, name, known) => {
    const response = await api.get(path);
    expect(response.status).toBe(400);
    expect((response.body as { obj: string[] }).obj).toContain(name);
    expect((response.body as { message: string }).message).toContain(`${name}: ${takes(...known)}`);
  });

  it('refuses a write with an unknown parameter before it writes anything', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitTyp=BOX`, [
      { product: { sku: product.sku }, quantity: { '@class': 'org.openwms.core.units.api.Piece', magnitude: 1 } },
    ]);

    expectValidationError(response, [['loadUnitTyp', takes('loadUnitType')]]);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('still answers the known parameters as before', async () => {
    const product = await givenProduct(ctx);

    const response = await api.get(`/v1/products?sku=${product.sku}`);

    expect(response.status).toBe(200);
    expect((response.body as { sku: string }).sku).toBe(product.sku);
  });
});
