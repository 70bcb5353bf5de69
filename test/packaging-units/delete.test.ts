import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenReserved,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  stockApi,
  storedUnit,
  storedUnitsOf,
  uniqueKey,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const quantities = async (sku: string): Promise<string[]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => `${unit.quantity} @${unit.holder.replace(/^@/, '')}`);

describe('DELETE /v1/packaging-units/{pKey} (packaging-units-deletebypkey)', () => {
  it('deletes the unit: 204 without a body, then 404', async () => {
    const product = await givenProduct(ctx);
    const [unit] = await givenUnitsInLoadUnit(ctx, uniqueKey('TU'), '1', [aUnit(product.sku, 3)]);

    const response = await api.del(`/v1/packaging-units/${unit!.pKey}`);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await storedUnit(ctx.db.pool, unit!.pKey)).toBeUndefined();
    expect((await api.get(`/v1/packaging-units/${unit!.pKey}`)).status).toBe(404);
    expectApiDeclined(await api.del(`/v1/packaging-units/${unit!.pKey}`), {
      status: 404,
      message: `No PackagingUnit with pKey [${unit!.pKey}] exists`,
      messageKey: 'owms.wms.inv.pu.pKeyNotExists',
      obj: [unit!.pKey],
      class: 'String',
    });
  });

  it('answers 404 for a malformed pKey', async () => {
    expectApiDeclined(await api.del('/v1/packaging-units/not-a-key'), {
      status: 404,
      message: 'No PackagingUnit with pKey [not-a-key] exists',
      messageKey: 'owms.wms.inv.pu.pKeyNotExists',
      obj: ['not-a-key'],
      class: 'String',
    });
  });

  it('answers 409 owms.wms.inv.pu.reserved for a reserved unit and keeps it', async () => {
    const product = await givenProduct(ctx);
    const [unit] = await givenUnitsInLoadUnit(ctx, uniqueKey('TU'), '1', [aUnit(product.sku, 5)]);
    await givenReserved(ctx, product.sku, 1);

    const response = await api.del(`/v1/packaging-units/${unit!.pKey}`);

    expectApiDeclined(response, {
      status: 409,
      message: `Reserved stock of [${unit!.pKey}] cannot be removed; release the reservation first`,
      messageKey: 'owms.wms.inv.pu.reserved',
      obj: [unit!.pKey],
      class: 'String',
    });
    expect(await storedUnit(ctx.db.pool, unit!.pKey)).toMatchObject({ quantity: '5 PC', reservedBase: '1' });
  });
});

describe('DELETE /v1/packaging-units (packaging-units-deleteonlocation)', () => {
  it('removes a quantity oldest first, deleting emptied units and reducing the next one', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const older = await givenUnitOnLocation(ctx, product.sku, locationId, 5);
    const newer = await givenUnitOnLocation(ctx, product.sku, locationId, 1, 'DOZ');

    const response = await api.del('/v1/packaging-units', {
      product: { sku: product.sku },
      actualLocation: { locationId },
      quantity: aQuantity(8),
    });

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await storedUnit(ctx.db.pool, older.pKey)).toBeUndefined();
    expect(await storedUnit(ctx.db.pool, newer.pKey)).toMatchObject({ quantity: '9 PC', qtyBase: '9' });
  });

  it('removes everything of the Product on the Location without a quantity, and nothing elsewhere', async () => {
    const product = await givenProduct(ctx);
    const other = await givenProduct(ctx);
    const { locationId, erpCode } = await givenLocation(ctx);
    const elsewhere = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 5);
    await givenUnitOnLocation(ctx, product.sku, locationId, 2);
    await givenUnitOnLocation(ctx, other.sku, locationId, 4);
    await givenUnitOnLocation(ctx, product.sku, elsewhere.locationId, 3);

    const response = await api.del('/v1/packaging-units', {
      product: { sku: product.sku },
      actualLocation: { erpCode },
    });

    expect(response.status).toBe(204);
    expect(await quantities(product.sku)).toEqual([`3 PC @${elsewhere.locationId}`]);
    expect(await quantities(other.sku)).toEqual([`4 PC @${locationId}`]);
  });

  it('removes what is there when more is asked for', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 2);

    const response = await api.del('/v1/packaging-units', {
      product: { sku: product.sku },
      actualLocation: { locationId },
      quantity: aQuantity(50),
    });

    expect(response.status).toBe(204);
    expect(await quantities(product.sku)).toEqual([]);
  });

  it('answers 404 owms.wms.inv.pu.noPUOnLocation [sku, locationId] when the Product is not there', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);

    const response = await api.del('/v1/packaging-units', {
      product: { sku: product.sku },
      actualLocation: { locationId },
      quantity: aQuantity(1),
    });

    expectApiDeclined(response, {
      status: 404,
      message: `No PackagingUnit of Product [${product.sku}] is at [${locationId}]`,
      messageKey: 'owms.wms.inv.pu.noPUOnLocation',
      obj: [product.sku, locationId],
      class: 'String',
    });
  });

  it('answers 409 owms.wms.inv.pu.reserved when the quantity would take reserved stock, and removes nothing', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const [unit] = await givenUnitsInLoadUnit(ctx, uniqueKey('TU'), '1', [aUnit(product.sku, 6)]);
    await givenReserved(ctx, product.sku, 4);
    await api.put(`/v1/packaging-units/${unit!.pKey}`, { actualLocation: { locationId } }).expect(200);

    const response = await api.del('/v1/packaging-units', {
      product: { sku: product.sku },
      actualLocation: { locationId },
      quantity: aQuantity(3),
    });

    expectApiDeclined(response, {
      status: 409,
      message: `Reserved stock of [${product.sku}] cannot be removed; release the reservation first`,
      messageKey: 'owms.wms.inv.pu.reserved',
      obj: [product.sku],
      class: 'String',
    });
    expect(await storedUnit(ctx.db.pool, unit!.pKey)).toMatchObject({ quantity: '6 PC', reservedBase: '4' });
  });

  it('answers 404 for an unknown Location, 404 not.found for an unknown SKU, 400 for a zero quantity', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);

    expectApiDeclined(
      await api.del('/v1/packaging-units', { product: { sku: product.sku }, actualLocation: { locationId: 'NOPE' } }),
      {
        status: 404,
        message: 'Location with locationId [NOPE] does not exist',
        messageKey: 'owms.wms.inv.loc.idNotExists',
        obj: ['NOPE'],
        class: 'String',
      },
    );
    expectApiDeclined(
      await api.del('/v1/packaging-units', { product: { sku: 'NO-SUCH-SKU' }, actualLocation: { locationId } }),
      { status: 404, message: 'No Product with SKU [NO-SUCH-SKU] exists', messageKey: 'not.found' },
    );
    expectValidationError(
      await api.del('/v1/packaging-units', {
        product: { sku: product.sku },
        actualLocation: { locationId },
        quantity: aQuantity(0),
      }),
      [['quantity.magnitude', 'must be greater than 0']],
    );
  });
});
