import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity, type QuantityJson } from '../support/builders.js';
import {
  aUnit,
  givenDivided,
  givenLocation,
  givenProduct,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  productTotal,
  stockApi,
  storedUnitsOf,
  uniqueKey,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const PATH = '/v1/packaging-units/move-to-load-unit';

const body = (sku: string, erpCode: string, bk: string, quantity?: QuantityJson, luPos = '1'): object => ({
  product: { sku },
  ...(quantity && { quantity }),
  targetTransportUnitBK: bk,
  targetLoadUnitPosition: luPos,
  actualLocation: { erpCode },
});

async function anEmptyLoadUnit(): Promise<string> {
  const bk = uniqueKey('TU');
  await givenDivided(ctx, bk, 1);
  return bk;
}

/** The Product's units as [pKey, quantity, holder, parent pKey]. */
const stock = async (sku: string): Promise<(string | null)[][]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => [unit.pKey, unit.quantity, unit.holder, unit.parentPKey]);

describe('PUT /v1/packaging-units/move-to-load-unit (packaging-units-movefromlocationtoloadunit, D21)', () => {
  it('moves every unit of the Product from the Location named by erpCode into the LoadUnit: 204', async () => {
    const product = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    const first = await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    const second = await givenUnitOnLocation(ctx, product.sku, locationId, 3);
    const bk = await anEmptyLoadUnit();
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(PATH, body(product.sku, erpCode, bk));

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await stock(product.sku)).toEqual([
      [first.pKey, '2 PC', `${bk}/1`, null],
      [second.pKey, '3 PC', `${bk}/1`, null],
    ]);
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['5', '5']);
    const { rows } = await ctx.db.pool.query('SELECT product_id FROM load_unit WHERE p_key = $1', [
      await loadUnitPKey(ctx.db.pool, bk, '1'),
    ]);
    expect(rows).toEqual([{ product_id: product.id }]);
  });

  it('splits a partial quantity: 2 DOZ − 5 PC leaves 19 PC on the Location', async () => {
    const product = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, locationId, 2, 'DOZ');
    const bk = await anEmptyLoadUnit();

    const response = await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(5)));

    expect(response.status).toBe(204);
    expect(await stock(product.sku)).toEqual([
      [unit.pKey, '19 PC', `@${locationId}`, null],
      [expect.any(String), '5 PC', `${bk}/1`, unit.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('24');
  });

  it('moves what is there when more is asked for', async () => {
    const product = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    const bk = await anEmptyLoadUnit();

    expect((await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(9)))).status).toBe(204);

    expect(await stock(product.sku)).toEqual([[unit.pKey, '2 PC', `${bk}/1`, null]]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('2');
  });

  it('answers 404 owms.wms.inv.lu.onTuNotExists for an unknown target LoadUnit', async () => {
    const product = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    const bk = await anEmptyLoadUnit();

    expectApiDeclined(await api.put(PATH, body(product.sku, erpCode, bk, undefined, '5')), {
      status: 404,
      message: `No LoadUnit at position [5] on TransportUnit [${bk}]`,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [bk, '5'],
      class: 'String',
    });
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => unit.holder)).toEqual([`@${locationId}`]);
  });

  it('answers 404 owms.wms.inv.pu.noPUOnLocation [sku, erpCode] when the Product is not on the Location', async () => {
    const product = await givenProduct(ctx);
    const { erpCode } = await givenLocation(ctx);
    const bk = await anEmptyLoadUnit();

    expectApiDeclined(await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(1))), {
      status: 404,
      message: `No PackagingUnit of Product [${product.sku}] is at [${erpCode}]`,
      messageKey: 'owms.wms.inv.pu.noPUOnLocation',
      obj: [product.sku, erpCode],
      class: 'String',
    });
  });

  it('answers 404 owms.wms.inv.loc.erpCodeNotExists for an unknown source Location', async () => {
    const product = await givenProduct(ctx);
    const bk = await anEmptyLoadUnit();

    expectApiDeclined(await api.put(PATH, body(product.sku, 'NO-SUCH-ERP', bk)), {
      status: 404,
      message: 'Location with erpCode [NO-SUCH-ERP] does not exist',
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: ['NO-SUCH-ERP'],
      class: 'String',
    });
  });

  it('answers 400 owms.wms.inv.lu.alreadyAssigned when the LoadUnit holds another Product (D17)', async () => {
    const product = await givenProduct(ctx);
    const other = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(other.sku, 1)]);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '1');

    expectApiDeclined(await api.put(PATH, body(product.sku, erpCode, bk)), {
      status: 400,
      message: `LoadUnit [${luPKey}] is already assigned to or carries another Product than [${product.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [luPKey, product.sku],
      class: 'String',
    });
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => unit.holder)).toEqual([`@${locationId}`]);
  });

  it('answers 400 for zero, negative and Weight quantities, and for a source named by locationId', async () => {
    const product = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    const bk = await anEmptyLoadUnit();

    expectValidationError(await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(0))), [
      ['quantity.magnitude', 'must be greater than 0'],
    ]);
    expectValidationError(await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(-1))), [
      ['quantity.magnitude', 'must be greater than 0'],
    ]);
    expectValidationError(await api.put(PATH, body(product.sku, erpCode, bk, aQuantity(1, 'G'))), [
      ['quantity', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    const byLocationId = { ...body(product.sku, erpCode, bk), actualLocation: { locationId } };
    expectValidationError(await api.put(PATH, byLocationId), [['actualLocation.erpCode', 'required']]);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => unit.holder)).toEqual([`@${locationId}`]);
  });
});
