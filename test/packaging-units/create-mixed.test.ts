import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aUnit, givenProduct, givenUnitsInLoadUnit, stockApi, storedUnitsOf, uniqueKey } from '../support/stock.js';

const ctx = useTestApp({ INVENTORY_MIXED_LOADUNITS: 'true' });
const api = stockApi(ctx);

describe('D17 with INVENTORY_MIXED_LOADUNITS=true', () => {
  it('creates units of a second Product in the same LoadUnit', async () => {
    const first = await givenProduct(ctx);
    const second = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(first.sku, 1)]);

    const response = await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units`, [aUnit(second.sku, 2)]);

    expect(response.status).toBe(201);
    expect((await storedUnitsOf(ctx.db.pool, second.sku)).map((unit) => [unit.holder, unit.quantity])).toEqual([
      [`${bk}/1`, '2 PC'],
    ]);
    expect((await storedUnitsOf(ctx.db.pool, first.sku)).map((unit) => unit.holder)).toEqual([`${bk}/1`]);
  });

  it('takes in units of two Products into one LoadUnit as NDJSON, assigning it the Product of its first line', async () => {
    const first = await givenProduct(ctx);
    const second = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const lines = [
      { transportUnitBK: bk, luPos: '1', loadUnitType: 'BOX', ...aUnit(first.sku, 1) },
      { transportUnitBK: bk, luPos: '1', ...aUnit(second.sku, 2) },
    ];

    const response = await api
      .post('/v1/packaging-units')
      .set('Content-Type', 'application/x-ndjson')
      .send(lines.map((line) => JSON.stringify(line)).join('\n'));

    expect(response.status, response.text).toBe(201);
    expect(response.body).toEqual({ created: 2 });
    expect((await storedUnitsOf(ctx.db.pool, second.sku)).map((unit) => [unit.holder, unit.quantity])).toEqual([
      [`${bk}/1`, '2 PC'],
    ]);
    const { rows } = await ctx.db.pool.query(
      'SELECT p.sku FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id JOIN product p ON p.id = lu.product_id WHERE tu.bk = $1',
      [bk],
    );
    expect(rows).toEqual([{ sku: first.sku }]);
  });

  it('moves a second Product into a LoadUnit holding another one', async () => {
    const first = await givenProduct(ctx);
    const second = await givenProduct(ctx);
    const target = uniqueKey('TU');
    const source = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, target, '1', [aUnit(first.sku, 1)]);
    await givenUnitsInLoadUnit(ctx, source, '1', [aUnit(second.sku, 3)]);

    const response = await api.put(`/v1/transport-units/${source}/load-units/1/packaging-units`, {
      product: { sku: second.sku },
      targetTransportUnitBK: target,
      targetLoadUnitPosition: '1',
    });

    expect(response.status).toBe(204);
    expect((await storedUnitsOf(ctx.db.pool, second.sku)).map((unit) => unit.holder)).toEqual([`${target}/1`]);
  });
});
