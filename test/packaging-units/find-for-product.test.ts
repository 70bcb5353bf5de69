import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenLoadUnitLocked,
  givenLocation,
  givenProduct,
  givenReserved,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  uniqueKey,
  VENDOR_OPENWMS,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const keysOf = (body: unknown): string[] => (body as { pKey: string }[]).map((unit) => unit.pKey);

async function oneUnitIn(sku: string, magnitude: number, extra = {}): Promise<{ unit: UnitJson; bk: string }> {
  const bk = uniqueKey('TU');
  const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(sku, magnitude, 'PC', extra)]);
  return { unit: unit!, bk };
}

describe('GET /v1/packaging-units?sku= (packaging-units-findforproduct) returns only reservable units (D19)', () => {
  let product: SeededProduct;
  let partlyReserved: UnitJson;
  let available: UnitJson;
  let onLocation: UnitJson;

  beforeAll(async () => {
    product = await givenProduct(ctx);
    await oneUnitIn(product.sku, 2);
    await givenReserved(ctx, product.sku, 2);
    ({ unit: partlyReserved } = await oneUnitIn(product.sku, 10));
    await givenReserved(ctx, product.sku, 3);
    ({ unit: available } = await oneUnitIn(product.sku, 5));
    const lockedLoadUnit = await oneUnitIn(product.sku, 6);
    await givenLoadUnitLocked(ctx, await loadUnitPKey(ctx.db.pool, lockedLoadUnit.bk, '1'));
    const problem = await oneUnitIn(product.sku, 4);
    await api
      .post(`/v1/transport-units/${problem.bk}/load-units/1/packaging-units/failures`, {
        messageNo: 'E1',
        messageText: 'damaged',
        product: { sku: product.sku },
        quantity: aQuantity(4),
      })
      .expect(204);
    const { locationId } = await givenLocation(ctx);
    onLocation = await givenUnitOnLocation(ctx, product.sku, locationId, 8);
  });

  it('leaves out fully reserved, LOCKED and locked-LoadUnit units; includes units on Locations', async () => {
    const response = await api.get(`/v1/packaging-units?sku=${product.sku}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(keysOf(response.body)).toEqual([partlyReserved.pKey, available.pKey, onLocation.pKey]);
    const [first] = response.body as Record<string, unknown>[];
    expect(first).toMatchObject({ quantity: aQuantity(10), qtyAvailable: aQuantity(7) });
    expect(first).not.toHaveProperty('links');
  });

  it('answers the vendor type with links when asked', async () => {
    const response = await api.get(`/v1/packaging-units?sku=${product.sku}`, VENDOR_OPENWMS);

    expect(response.headers['content-type']).toBe(`${VENDOR_OPENWMS}; charset=utf-8`);
    expect((response.body as { links: { rel: string }[] }[]).map((unit) => unit.links.map((link) => link.rel))).toEqual(
      [['loadUnit', 'transportUnit', 'product'], ['loadUnit', 'transportUnit', 'product'], ['product']],
    );
  });

  it('caps the list with amount (1 and 10000 are accepted)', async () => {
    expect(keysOf((await api.get(`/v1/packaging-units?sku=${product.sku}&amount=1`)).body)).toEqual([
      partlyReserved.pKey,
    ]);
    const all = await api.get(`/v1/packaging-units?sku=${product.sku}&amount=10000`);
    expect(all.status).toBe(200);
    expect(keysOf(all.body)).toHaveLength(3);
  });

  it.each([['0'], ['10001'], ['abc'], ['1.5'], ['-1']])('answers 400 for amount=%s', async (amount) => {
    const response = await api.get(`/v1/packaging-units?sku=${product.sku}&amount=${amount}`);

    expectValidationError(response, [['amount', 'must be an integer from 1 to 10000']]);
  });

  it('answers an empty list for a LOCKED product even though it has stock', async () => {
    const locked = await givenProduct(ctx, { availabilityState: 'LOCKED' });
    await oneUnitIn(locked.sku, 3);

    const response = await api.get(`/v1/packaging-units?sku=${locked.sku}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('answers 404 not.found for an unknown SKU', async () => {
    expectApiDeclined(await api.get('/v1/packaging-units?sku=NO-SUCH-SKU'), {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });
});

describe('sorting of the findforproduct list', () => {
  let product: SeededProduct;
  let fiveLate: UnitJson;
  let dozenEarly: UnitJson;
  let threeNever: UnitJson;

  beforeAll(async () => {
    product = await givenProduct(ctx);
    ({ unit: fiveLate } = await oneUnitIn(product.sku, 5, { expiresAt: '2031-01-01T00:00:00.000Z' }));
    const bk = uniqueKey('TU');
    [dozenEarly] = (await givenUnitsInLoadUnit(ctx, bk, '1', [
      aUnit(product.sku, 1, 'DOZ', { expiresAt: '2030-01-01T00:00:00.000Z' }),
    ])) as [UnitJson];
    ({ unit: threeNever } = await oneUnitIn(product.sku, 3));
  });

  const sorted = async (query: string): Promise<string[]> => {
    const response = await api.get(`/v1/packaging-units?sku=${product.sku}${query}`);
    expect(response.status).toBe(200);
    return keysOf(response.body);
  };

  it('sorts by createDt ascending by default, and descending with DESC in any case', async () => {
    expect(await sorted('')).toEqual([fiveLate.pKey, dozenEarly.pKey, threeNever.pKey]);
    expect(await sorted('&sortDirection=asc&sortProperty=createDt')).toEqual([
      fiveLate.pKey,
      dozenEarly.pKey,
      threeNever.pKey,
    ]);
    expect(await sorted('&sortDirection=DESC')).toEqual([threeNever.pKey, dozenEarly.pKey, fiveLate.pKey]);
    expect(await sorted('&sortDirection=desc&sortProperty=createDt')).toEqual([
      threeNever.pKey,
      dozenEarly.pKey,
      fiveLate.pKey,
    ]);
  });

  it('sorts by expiresAt with units without expiry last', async () => {
    expect(await sorted('&sortProperty=expiresAt')).toEqual([dozenEarly.pKey, fiveLate.pKey, threeNever.pKey]);
    expect(await sorted('&sortProperty=expiresAt&sortDirection=DESC')).toEqual([
      fiveLate.pKey,
      dozenEarly.pKey,
      threeNever.pKey,
    ]);
  });

  it('sorts by quantity in the smallest unit (1 DOZ is more than 5 PC)', async () => {
    expect(await sorted('&sortProperty=quantity')).toEqual([threeNever.pKey, fiveLate.pKey, dozenEarly.pKey]);
    expect(await sorted('&sortProperty=quantity&sortDirection=DESC')).toEqual([
      dozenEarly.pKey,
      fiveLate.pKey,
      threeNever.pKey,
    ]);
  });

  it('sorts by pKey', async () => {
    const keys = [fiveLate.pKey, dozenEarly.pKey, threeNever.pKey].sort();
    expect(await sorted('&sortProperty=pKey')).toEqual(keys);
    expect(await sorted('&sortProperty=pKey&sortDirection=DESC')).toEqual([...keys].reverse());
  });

  it('answers 400 for an unknown sortProperty or sortDirection', async () => {
    expectValidationError(await api.get(`/v1/packaging-units?sku=${product.sku}&sortProperty=sku`), [
      ['sortProperty', 'must be one of createDt, expiresAt, quantity, pKey'],
    ]);
    expectValidationError(await api.get(`/v1/packaging-units?sku=${product.sku}&sortDirection=sideways`), [
      ['sortDirection', 'must be ASC or DESC'],
    ]);
  });

  it('answers 400 for SQL in sortProperty and the table is still there', async () => {
    const injected = encodeURIComponent('createDt;drop table packaging_unit');

    const response = await api.get(`/v1/packaging-units?sku=${product.sku}&sortProperty=${injected}`);

    expectValidationError(response, [['sortProperty', 'must be one of createDt, expiresAt, quantity, pKey']]);
    const { rows } = await ctx.db.pool.query<{ t: string | null }>("SELECT to_regclass('packaging_unit')::text AS t");
    expect(rows).toEqual([{ t: 'packaging_unit' }]);
    expect(await sorted('')).toHaveLength(3);
  });
});
