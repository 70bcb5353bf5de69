import { describe, expect, it } from 'vitest';
import { expectApiDeclined } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import {
  aUnit,
  givenDivided,
  givenProduct,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  storedUnitsOf,
  uniqueKey,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);

describe('D17: one Product per LoadUnit (default)', () => {
  it('answers 400 owms.wms.inv.lu.alreadyAssigned for a second Product and writes nothing', async () => {
    const first = await givenProduct(ctx);
    const second = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(first.sku, 1)]);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '1');

    const response = await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units`, [aUnit(second.sku, 2)]);

    expectApiDeclined(response, {
      status: 400,
      message: `LoadUnit [${luPKey}] is already assigned to or carries another Product than [${second.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [luPKey, second.sku],
      class: 'String',
    });
    expect(await storedUnitsOf(ctx.db.pool, second.sku)).toEqual([]);
    expect((await storedUnitsOf(ctx.db.pool, first.sku)).map((unit) => unit.quantity)).toEqual(['1 PC']);
  });

  it('refuses two Products in one request for a new LoadUnit and creates neither the units nor the LoadUnit', async () => {
    const first = await givenProduct(ctx);
    const second = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`, [
      aUnit(first.sku, 1),
      aUnit(second.sku, 1),
    ]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.lu.alreadyAssigned' });
    expect(await storedUnitsOf(ctx.db.pool, first.sku)).toEqual([]);
    const { rows } = await ctx.db.pool.query('SELECT 1 FROM transport_unit WHERE bk = $1', [bk]);
    expect(rows).toEqual([]);
  });

  it('answers alreadyAssigned when the LoadUnit is assigned (lu-putproductinto) to another Product', async () => {
    const assigned = await givenProduct(ctx);
    const other = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenDivided(ctx, bk, 1);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '1');
    await api.put(`/v1/load-units/${luPKey}`, { sku: assigned.sku, baseUnit: aQuantity(1) }).expect(200);

    const response = await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units`, [aUnit(other.sku, 1)]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.lu.alreadyAssigned', obj: [luPKey, other.sku] });
  });
});
