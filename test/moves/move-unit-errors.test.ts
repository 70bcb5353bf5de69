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
  loadUnitPKey,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const PIECE_KIND = "must be a Piece quantity like the Product's baseUnit";

async function aUnitInLoadUnit(magnitude = 10): Promise<{ product: SeededProduct; unit: UnitJson; bk: string }> {
  const product = await givenProduct(ctx);
  const bk = uniqueKey('TU');
  const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, magnitude)]);
  return { product, unit: unit!, bk };
}

/** The Product's units as `quantity@holder`, to show that a refused move changed nothing. */
const stock = async (sku: string): Promise<string[]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => `${unit.quantity}@${unit.holder}`);

describe('PUT /v1/packaging-units/{pKey}: refused moves change nothing', () => {
  it.each([['4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a005'], ['not-a-key']])(
    'answers 404 owms.wms.inv.pu.pKeyNotExists for the missing unit %s',
    async (pKey) => {
      const { locationId } = await givenLocation(ctx);

      expectApiDeclined(await api.put(`/v1/packaging-units/${pKey}`, { actualLocation: { locationId } }), {
        status: 404,
        message: `No PackagingUnit with pKey [${pKey}] exists`,
        messageKey: 'owms.wms.inv.pu.pKeyNotExists',
        obj: [pKey],
        class: 'String',
      });
    },
  );

  it('answers 404 owms.wms.inv.lu.onTuNotExists for an unknown target LoadUnit position', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit();

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(2),
      loadUnit: { transportUnitBK: bk, physicalPosition: '9' },
    });

    expectApiDeclined(response, {
      status: 404,
      message: `No LoadUnit at position [9] on TransportUnit [${bk}]`,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [bk, '9'],
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([`10 PC@${bk}/1`]);
  });

  it('answers 404 owms.wms.inv.lu.onTuNotExists for an unknown target LoadUnit key (D21)', async () => {
    const { unit } = await aUnitInLoadUnit();
    const pKey = '4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a006';

    expectApiDeclined(await api.put(`/v1/packaging-units/${unit.pKey}`, { loadUnit: { pKey } }), {
      status: 404,
      message: `No target LoadUnit with pKey [${pKey}] exists`,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [pKey],
      class: 'String',
    });
  });

  it('answers 404 owms.wms.inv.loc.idNotExists for an unknown target Location', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit();

    expectApiDeclined(await api.put(`/v1/packaging-units/${unit.pKey}`, { actualLocation: { locationId: 'NOPE' } }), {
      status: 404,
      message: 'Location with locationId [NOPE] does not exist',
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: ['NOPE'],
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([`10 PC@${bk}/1`]);
  });

  it('answers 400 when the target is where the unit already is (LoadUnit or Location)', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit();
    const { locationId } = await givenLocation(ctx);
    const onLocation = await givenUnitOnLocation(ctx, product.sku, locationId, 2);

    expectValidationError(
      await api.put(`/v1/packaging-units/${unit.pKey}`, {
        quantity: aQuantity(1),
        loadUnit: { pKey: await loadUnitPKey(ctx.db.pool, bk, '1') },
      }),
      [['target', 'is where the stock already is']],
    );
    expectValidationError(await api.put(`/v1/packaging-units/${onLocation.pKey}`, { actualLocation: { locationId } }), [
      ['target', 'is where the stock already is'],
    ]);
    expect(await stock(product.sku)).toEqual([`10 PC@${bk}/1`, `2 PC@@${locationId}`]);
  });

  it('answers 400 owms.wms.inv.lu.alreadyAssigned when the target LoadUnit holds another Product (D17)', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit();
    const other = await aUnitInLoadUnit(1);
    const targetKey = await loadUnitPKey(ctx.db.pool, other.bk, '1');

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, { loadUnit: { pKey: targetKey } });

    expectApiDeclined(response, {
      status: 400,
      message: `LoadUnit [${targetKey}] is already assigned to or carries another Product than [${product.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [targetKey, product.sku],
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([`10 PC@${bk}/1`]);
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
  ])('answers 400 for a %s quantity', async (_name, magnitude) => {
    const { unit } = await aUnitInLoadUnit();
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(magnitude),
      actualLocation: { locationId },
    });

    expectValidationError(response, [['quantity.magnitude', 'must be greater than 0']]);
  });

  it('answers 400 for a Weight quantity of a Piece product', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit();
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(3, 'KG'),
      actualLocation: { locationId },
    });

    expectValidationError(response, [['quantity', PIECE_KIND]]);
    expect(await stock(product.sku)).toEqual([`10 PC@${bk}/1`]);
  });

  it('answers 409 owms.wms.inv.pu.reserved when everything is reserved and a quantity is asked for', async () => {
    const { product, unit, bk } = await aUnitInLoadUnit(5);
    await givenReserved(ctx, product.sku, 5);
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(`/v1/packaging-units/${unit.pKey}`, {
      quantity: aQuantity(2),
      actualLocation: { locationId },
    });

    expectApiDeclined(response, {
      status: 409,
      message: `Reserved stock of [${product.sku}] cannot be removed; release the reservation first`,
      messageKey: 'owms.wms.inv.pu.reserved',
      obj: [product.sku],
      class: 'String',
    });
    expect(await stock(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it('answers 400 for a body naming both targets, neither, another pKey or another Product', async () => {
    const { unit } = await aUnitInLoadUnit();
    const { locationId } = await givenLocation(ctx);
    const path = `/v1/packaging-units/${unit.pKey}`;
    const either = 'give either actualLocation or loadUnit as the target';

    expectValidationError(await api.put(path, { actualLocation: { locationId }, loadUnit: { pKey: unit.pKey } }), [
      ['actualLocation', either],
    ]);
    expectValidationError(await api.put(path, { quantity: aQuantity(1) }), [['actualLocation', either]]);
    expectValidationError(
      await api.put(path, { pKey: '4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a007', actualLocation: { locationId } }),
      [['pKey', 'must match the pKey in the path']],
    );
    const response = await api.put(path, { product: { sku: 'OTHER' }, actualLocation: { locationId } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['product.sku'] });
  });
});
