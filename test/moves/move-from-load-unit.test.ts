import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity, type QuantityJson } from '../support/builders.js';
import {
  aUnit,
  givenDivided,
  givenLocation,
  givenProduct,
  givenReserved,
  givenUnitsInLoadUnit,
  productTotal,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const pathOf = (bk: string, luPos = '1'): string => `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units`;
const toLoadUnit = (sku: string, bk: string, quantity?: QuantityJson): object => ({
  product: { sku },
  ...(quantity && { quantity }),
  targetTransportUnitBK: bk,
  targetLoadUnitPosition: '1',
});
const toLocation = (sku: string, locationId: string, quantity?: QuantityJson): object => ({
  product: { sku },
  ...(quantity && { quantity }),
  actualLocation: { locationId },
});

async function givenStock(
  ...units: [number, string?][]
): Promise<{ product: SeededProduct; bk: string; units: UnitJson[] }> {
  const product = await givenProduct(ctx);
  const bk = uniqueKey('TU');
  const created = await givenUnitsInLoadUnit(
    ctx,
    bk,
    '1',
    units.map(([magnitude, code]) => aUnit(product.sku, magnitude, code)),
  );
  return { product, bk, units: created };
}

async function anEmptyLoadUnit(): Promise<string> {
  const bk = uniqueKey('TU');
  await givenDivided(ctx, bk, 1);
  return bk;
}

/** The Product's units as [pKey, quantity, reserved (base), holder, parent pKey]. */
const stock = async (sku: string): Promise<(string | null)[][]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => [
    unit.pKey,
    unit.quantity,
    unit.reservedBase,
    unit.holder,
    unit.parentPKey,
  ]);

describe('PUT /v1/transport-units/{bk}/load-units/{luPos}/packaging-units, LoadUnit to LoadUnit (D21)', () => {
  it('moves every unit of the Product without quantity: 204, same units in the target', async () => {
    const { product, bk, units } = await givenStock([3], [1, 'DOZ']);
    const target = await anEmptyLoadUnit();
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(pathOf(bk), toLoadUnit(product.sku, target));

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '3 PC', '0', `${target}/1`, null],
      [units[1]!.pKey, '1 DOZ', '0', `${target}/1`, null],
    ]);
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['15', '15']);
  });

  it('splits a partial quantity: 2 DOZ − 5 PC leaves 19 PC in the source', async () => {
    const { product, bk, units } = await givenStock([2, 'DOZ']);
    const target = await anEmptyLoadUnit();

    expect((await api.put(pathOf(bk), toLoadUnit(product.sku, target, aQuantity(5)))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '19 PC', '0', `${bk}/1`, null],
      [expect.any(String), '5 PC', '0', `${target}/1`, units[0]!.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('24');
  });

  it('moves what is there when more is asked for', async () => {
    const { product, bk, units } = await givenStock([4]);
    const target = await anEmptyLoadUnit();

    expect((await api.put(pathOf(bk), toLoadUnit(product.sku, target, aQuantity(1, 'DOZ')))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([[units[0]!.pKey, '4 PC', '0', `${target}/1`, null]]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('4');
  });
});

describe('PUT /v1/transport-units/{bk}/load-units/{luPos}/packaging-units, LoadUnit to Location (D21)', () => {
  it('moves every unit of the Product onto the Location without quantity', async () => {
    const { product, bk, units } = await givenStock([3], [2]);
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(pathOf(bk), toLocation(product.sku, locationId));

    expect(response.status).toBe(204);
    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '3 PC', '0', `@${locationId}`, null],
      [units[1]!.pKey, '2 PC', '0', `@${locationId}`, null],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('5');
  });

  it('moves a quantity oldest first, splitting the unit where it runs out', async () => {
    const { product, bk, units } = await givenStock([3], [2]);
    const { locationId } = await givenLocation(ctx);

    expect((await api.put(pathOf(bk), toLocation(product.sku, locationId, aQuantity(4)))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '3 PC', '0', `@${locationId}`, null],
      [units[1]!.pKey, '1 PC', '0', `${bk}/1`, null],
      [expect.any(String), '1 PC', '0', `@${locationId}`, units[1]!.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('5');
  });
});

describe('moves out of a LoadUnit and reservations (D21)', () => {
  it('moves only the unreserved part of a partly reserved unit; the reservation stays at the source', async () => {
    const { product, bk, units } = await givenStock([10]);
    await givenReserved(ctx, product.sku, 4);
    const target = await anEmptyLoadUnit();

    expect((await api.put(pathOf(bk), toLoadUnit(product.sku, target, aQuantity(10)))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '4 PC', '4', `${bk}/1`, null],
      [expect.any(String), '6 PC', '0', `${target}/1`, units[0]!.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('10');
  });

  it('moves whole units with their reservations when no quantity is given', async () => {
    const { product, bk, units } = await givenStock([10]);
    await givenReserved(ctx, product.sku, 4);
    const { locationId } = await givenLocation(ctx);

    expect((await api.put(pathOf(bk), toLocation(product.sku, locationId))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([[units[0]!.pKey, '10 PC', '4', `@${locationId}`, null]]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('10');
  });

  it('answers 409 owms.wms.inv.pu.reserved when everything is reserved and a quantity is asked for', async () => {
    const { product, bk, units } = await givenStock([3], [2]);
    await givenReserved(ctx, product.sku, 5);
    const target = await anEmptyLoadUnit();

    const response = await api.put(pathOf(bk), toLoadUnit(product.sku, target, aQuantity(1)));

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      message: `Reserved stock of [${product.sku}] cannot be removed; release the reservation first`,
      messageKey: 'owms.wms.inv.pu.reserved',
      obj: [product.sku],
      httpStatus: '409',
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([
      [units[0]!.pKey, '3 PC', '3', `${bk}/1`, null],
      [units[1]!.pKey, '2 PC', '2', `${bk}/1`, null],
    ]);
  });
});
