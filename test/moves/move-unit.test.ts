import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { HAL_JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenDivided,
  givenLocation,
  givenProduct,
  givenReserved,
  givenUnitsInLoadUnit,
  loadUnitPart,
  loadUnitPKey,
  locationPart,
  productPart,
  productTotal,
  STOCK_BASE,
  stockApi,
  storedUnit,
  storedUnitsOf,
  uniqueKey,
  unitView,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);

/** A Product with one unit of `magnitude` `code` in a fresh LoadUnit bk/1. */
async function aUnitInLoadUnit(
  magnitude: number,
  code = 'PC',
): Promise<{ product: SeededProduct; unit: UnitJson; bk: string }> {
  const product = await givenProduct(ctx);
  const bk = uniqueKey('TU');
  const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, magnitude, code)]);
  return { product, unit: unit!, bk };
}

/** An empty LoadUnit at bk/1 (lu-divide into one part). */
async function anEmptyLoadUnit(): Promise<{ bk: string; pKey: string }> {
  const bk = uniqueKey('TU');
  await givenDivided(ctx, bk, 1);
  return { bk, pKey: await loadUnitPKey(ctx.db.pool, bk, '1') };
}

describe('PUT /v1/packaging-units/{pKey} to a Location (D21)', () => {
  it('moves the whole unit without quantity: 200 HAL, same unit with actualLocation', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit(2, 'DOZ');
    const { locationId } = await givenLocation(ctx);
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      pKey: unit.pKey,
      product: { sku: product.sku },
      actualLocation: { locationId },
    });

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual(
      unitView({
        pKey: unit.pKey,
        product: productPart(product),
        quantity: aQuantity(2, 'DOZ'),
        actualLocation: await locationPart(ctx, locationId),
        ol: 1,
        _links: {
          self: { href: `${STOCK_BASE}/v1/packaging-units/${unit.pKey}` },
          product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
        },
      }),
    );
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['24', '24']);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((stored) => [stored.pKey, stored.holder])).toEqual([
      [unit.pKey, `@${locationId}`],
    ]);
    expect((await api.get(`/v1/transport-units/${bk}/load-units/1/packaging-units`)).body).toEqual([]);
  });

  it('splits a partial quantity off: 2 DOZ − 5 PC leaves 19 PC, the new unit records its parent', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit(2, 'DOZ');
    const { locationId } = await givenLocation(ctx);
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(5),
      actualLocation: { locationId },
    });

    expect(response.status).toBe(200);
    const moved = response.body as { pKey: string };
    expect(moved.pKey).not.toBe(unit.pKey);
    expect(response.body).toMatchObject({ quantity: aQuantity(5), actualLocation: { locationId }, ol: 0 });
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['24', '24']);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([
      expect.objectContaining({ pKey: unit.pKey, quantity: '19 PC', holder: `${bk}/1`, parentPKey: null }),
      expect.objectContaining({ pKey: moved.pKey, quantity: '5 PC', holder: `@${locationId}`, parentPKey: unit.pKey }),
    ]);
  });

  it('moves what is there when more is asked for', async () => {
    const { product, unit } = await aUnitInLoadUnit(10);
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(100),
      actualLocation: { locationId },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ pKey: unit.pKey, quantity: aQuantity(10) });
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((stored) => stored.holder)).toEqual([`@${locationId}`]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('10');
  });
});

describe('PUT /v1/packaging-units/{pKey} into another LoadUnit (D21)', () => {
  it('moves the whole unit into a LoadUnit named by pKey: 200 HAL with the target loadUnit', async () => {
    const { product, unit } = await aUnitInLoadUnit(4);
    const target = await anEmptyLoadUnit();
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      product: { sku: product.sku },
      loadUnit: { pKey: target.pKey },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      unitView({
        pKey: unit.pKey,
        product: productPart(product),
        quantity: aQuantity(4),
        loadUnit: loadUnitPart(target.pKey, target.bk, '1'),
        ol: 1,
        _links: {
          self: { href: `${STOCK_BASE}/v1/packaging-units/${unit.pKey}` },
          loadUnit: { href: `${STOCK_BASE}/v1/load-units/${target.pKey}` },
          transportUnit: { href: `${STOCK_BASE}/v1/transport-units?bk=${target.bk}` },
          product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
        },
      }),
    );
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['4', '4']);
    const { rows } = await ctx.db.pool.query('SELECT product_id FROM load_unit WHERE p_key = $1', [target.pKey]);
    expect(rows).toEqual([{ product_id: product.id }]);
  });

  it('splits a partial quantity into a LoadUnit named by transportUnitBK and physicalPosition', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const expiresAt = '2031-02-03T04:05:06.007Z';
    const [unit] = (await givenUnitsInLoadUnit(ctx, bk, '1', [
      aUnit(product.sku, 10, 'PC', { serialNumber: 'SN-1', expiresAt }),
    ])) as [UnitJson];
    const target = await anEmptyLoadUnit();
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(3),
      loadUnit: { transportUnitBK: target.bk, physicalPosition: '1', locked: false },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      quantity: aQuantity(3),
      loadUnit: loadUnitPart(target.pKey, target.bk, '1'),
      serialNumber: 'SN-1',
      expiresAt,
    });
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['10', '10']);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([
      expect.objectContaining({ pKey: unit.pKey, quantity: '7 PC', holder: `${bk}/1` }),
      expect.objectContaining({ quantity: '3 PC', holder: `${target.bk}/1`, parentPKey: unit.pKey }),
    ]);
  });
  it('moves the whole unit into a LoadUnit named by transportUnitBK and physicalPosition without quantity', async () => {
    const { product, unit } = await aUnitInLoadUnit(1, 'DOZ');
    const target = await anEmptyLoadUnit();

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      loadUnit: { transportUnitBK: target.bk, physicalPosition: '1' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ pKey: unit.pKey, quantity: aQuantity(1, 'DOZ'), ol: 1 });
    expect(await storedUnit(ctx.db.pool, unit.pKey)).toMatchObject({ quantity: '1 DOZ', holder: `${target.bk}/1` });
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('12');
  });
});

describe('PUT /v1/packaging-units/{pKey} and reservations (D21)', () => {
  it('moves only the unreserved part of a partly reserved unit; the reservation stays at the source', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit(10);
    await givenReserved(ctx, product.sku, 4);
    const { locationId } = await givenLocation(ctx);
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(10),
      actualLocation: { locationId },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ quantity: aQuantity(6), qtyAvailable: aQuantity(6) });
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['10', '10']);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([
      expect.objectContaining({ pKey: unit.pKey, quantity: '4 PC', reservedBase: '4', holder: `${bk}/1` }),
      expect.objectContaining({ quantity: '6 PC', reservedBase: '0', holder: `@${locationId}` }),
    ]);
  });

  it('takes the reservation along when the whole unit moves without quantity', async () => {
    const { product, unit } = await aUnitInLoadUnit(10);
    await givenReserved(ctx, product.sku, 4);
    const target = await anEmptyLoadUnit();

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, { loadUnit: { pKey: target.pKey } });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ pKey: unit.pKey, quantity: aQuantity(10), qtyAvailable: aQuantity(6) });
    expect(await storedUnit(ctx.db.pool, unit.pKey)).toMatchObject({ reservedBase: '4', holder: `${target.bk}/1` });
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('10');
    const { rows } = await ctx.db.pool.query<{ p_key: string }>(
      `SELECT pu.p_key FROM reservation r JOIN packaging_unit pu ON pu.id = r.packaging_unit_id
        WHERE r.released_at IS NULL AND pu.product_id = $1`,
      [product.id],
    );
    expect(rows).toEqual([{ p_key: unit.pKey }]);
  });
});
