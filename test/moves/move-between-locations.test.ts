import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity, type QuantityJson } from '../support/builders.js';
import {
  givenLocation,
  givenProduct,
  givenUnitOnLocation,
  productTotal,
  stockApi,
  storedUnitsOf,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const PATH = '/v1/packaging-units/move-between-locations';

const item = (sku: string, from: string, to: string, quantity?: QuantityJson): Record<string, unknown> => ({
  product: { sku },
  ...(quantity && { quantity }),
  actualLocation: { locationId: from },
  targetLocation: { locationId: to },
});

/** The Product's units as [pKey, quantity, holder, parent pKey]. */
const stock = async (sku: string): Promise<(string | null)[][]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => [unit.pKey, unit.quantity, unit.holder, unit.parentPKey]);

describe('PUT /v1/packaging-units/move-between-locations (packaging-units-movebetweenlocations, D21)', () => {
  it('moves every unit of the Product without quantity: 204, same units at the target, other Products stay', async () => {
    const product = await givenProduct(ctx);
    const other = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const first = await givenUnitOnLocation(ctx, product.sku, a.locationId, 5);
    const second = await givenUnitOnLocation(ctx, product.sku, a.locationId, 1, 'DOZ');
    await givenUnitOnLocation(ctx, other.sku, a.locationId, 2);
    const before = await productTotal(ctx.db.pool, product.sku);

    const response = await api.put(PATH, [item(product.sku, a.locationId, b.locationId)]);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await stock(product.sku)).toEqual([
      [first.pKey, '5 PC', `@${b.locationId}`, null],
      [second.pKey, '1 DOZ', `@${b.locationId}`, null],
    ]);
    expect((await storedUnitsOf(ctx.db.pool, other.sku)).map((unit) => unit.holder)).toEqual([`@${a.locationId}`]);
    expect([before, await productTotal(ctx.db.pool, product.sku)]).toEqual(['17', '17']);
  });

  it('moves a quantity oldest first: whole units while they fit, then a split whose source keeps the rest', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const older = await givenUnitOnLocation(ctx, product.sku, a.locationId, 5);
    const dozen = await givenUnitOnLocation(ctx, product.sku, a.locationId, 1, 'DOZ');

    const response = await api.put(PATH, [item(product.sku, a.locationId, b.locationId, aQuantity(8))]);

    expect(response.status).toBe(204);
    expect(await stock(product.sku)).toEqual([
      [older.pKey, '5 PC', `@${b.locationId}`, null],
      [dozen.pKey, '9 PC', `@${a.locationId}`, null],
      [expect.any(String), '3 PC', `@${b.locationId}`, dozen.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('17');
  });

  it('moves exact decimal Weight quantities and keeps the sum (0.3 KG − 100 G = 200 G)', async () => {
    const product = await givenProduct(ctx, { baseUnit: aQuantity(1, 'KG') });
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, a.locationId, 0.3, 'KG');

    const response = await api.put(PATH, [item(product.sku, a.locationId, b.locationId, aQuantity(100, 'G'))]);

    expect(response.status).toBe(204);
    expect(await stock(product.sku)).toEqual([
      [unit.pKey, '200 G', `@${a.locationId}`, null],
      [expect.any(String), '100 G', `@${b.locationId}`, unit.pKey],
    ]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('300000');
    const moved = await api.get(`/v1/packaging-units/${unit.pKey}`);
    expect(moved.body).toMatchObject({ quantity: aQuantity(200, 'G') });
  });

  it('moves what is there when more is asked for', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, a.locationId, 4);

    expect((await api.put(PATH, [item(product.sku, a.locationId, b.locationId, aQuantity(40))])).status).toBe(204);

    expect(await stock(product.sku)).toEqual([[unit.pKey, '4 PC', `@${b.locationId}`, null]]);
    expect(await productTotal(ctx.db.pool, product.sku)).toBe('4');
  });

  it('applies all items in one transaction: a failing item undoes the ones before it', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const empty = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, a.locationId, 4);

    const response = await api.put(PATH, [
      item(product.sku, a.locationId, b.locationId),
      item(product.sku, empty.locationId, b.locationId),
    ]);

    expectApiDeclined(response, {
      status: 404,
      message: `No PackagingUnit of Product [${product.sku}] is at [${empty.locationId}]`,
      messageKey: 'owms.wms.inv.pu.noPUOnLocation',
      obj: [product.sku, empty.locationId],
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([[unit.pKey, '4 PC', `@${a.locationId}`, null]]);
  });

  it('answers 404 for an unknown target or source Location and not.found for an unknown SKU', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, a.locationId, 4);
    const unknownLocation = (id: string) => ({
      status: 404,
      message: `Location with locationId [${id}] does not exist`,
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: [id],
      class: 'String',
    });

    expectApiDeclined(await api.put(PATH, [item(product.sku, a.locationId, 'NOPE')]), unknownLocation('NOPE'));
    expectApiDeclined(await api.put(PATH, [item(product.sku, 'NADA', a.locationId)]), unknownLocation('NADA'));
    expectApiDeclined(await api.put(PATH, [item('NO-SUCH-SKU', a.locationId, a.locationId)]), {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });

  it('answers 400 when the target is the source', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, a.locationId, 4);

    expectValidationError(await api.put(PATH, [item(product.sku, a.locationId, a.locationId)]), [
      ['target', 'is where the stock already is'],
    ]);
  });

  it.each([
    ['zero', 0],
    ['negative', -3],
  ])('answers 400 naming the item for a %s quantity', async (_name, magnitude) => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);

    const response = await api.put(PATH, [item(product.sku, a.locationId, b.locationId, aQuantity(magnitude))]);

    expectValidationError(response, [['[0].quantity.magnitude', 'must be greater than 0']]);
  });

  it('answers 400 naming the item for a Weight quantity of a Piece product', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, a.locationId, 4);

    const response = await api.put(PATH, [
      item(product.sku, a.locationId, b.locationId, aQuantity(1)),
      item(product.sku, a.locationId, b.locationId, aQuantity(1, 'KG')),
    ]);

    expectValidationError(response, [['[1].quantity', "must be a Piece quantity like the Product's baseUnit"]]);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => unit.holder)).toEqual([`@${a.locationId}`]);
  });

  it('answers 400 for an empty list', async () => {
    expectValidationError(await api.put(PATH, []), [['body', 'Too small: expected array to have >=1 items']]);
  });
});
