import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import {
  aUnit,
  givenDivided,
  givenLocation,
  givenProduct,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  type SeededProduct,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const pathOf = (bk: string, luPos = '1'): string => `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units`;
const onTuNotExists = (bk: string, luPos: string) => ({
  status: 404,
  message: `No LoadUnit at position [${luPos}] on TransportUnit [${bk}]`,
  messageKey: 'owms.wms.inv.lu.onTuNotExists',
  obj: [bk, luPos],
  class: 'String',
});

/** A Product with 5 PC in the LoadUnit bk/1. */
async function givenStock(): Promise<{ product: SeededProduct; bk: string }> {
  const product = await givenProduct(ctx);
  const bk = uniqueKey('TU');
  await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 5)]);
  return { product, bk };
}

const holders = async (sku: string): Promise<string[]> =>
  (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => `${unit.quantity}@${unit.holder}`);

describe('PUT /v1/transport-units/{bk}/load-units/{luPos}/packaging-units: refused moves change nothing', () => {
  it('answers 404 owms.wms.inv.pu.noPUOnLocation [sku, bk/luPos] when the Product is not in the LoadUnit', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenDivided(ctx, bk, 2);
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(pathOf(bk, '2'), {
      product: { sku: product.sku },
      quantity: aQuantity(1),
      actualLocation: { locationId },
    });

    expectApiDeclined(response, {
      status: 404,
      message: `No PackagingUnit of Product [${product.sku}] is at [${bk}/2]`,
      messageKey: 'owms.wms.inv.pu.noPUOnLocation',
      obj: [product.sku, `${bk}/2`],
      class: 'String',
    });
  });

  it('answers 404 owms.wms.inv.lu.onTuNotExists for an unknown source or target LoadUnit', async () => {
    const { product, bk } = await givenStock();
    const { locationId } = await givenLocation(ctx);

    expectApiDeclined(
      await api.put(pathOf(bk, '8'), { product: { sku: product.sku }, actualLocation: { locationId } }),
      onTuNotExists(bk, '8'),
    );
    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      targetTransportUnitBK: 'NO-SUCH-TU',
      targetLoadUnitPosition: '1',
    });
    expectApiDeclined(response, onTuNotExists('NO-SUCH-TU', '1'));
    expect(await holders(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it('answers 404 owms.wms.inv.loc.idNotExists for an unknown target Location', async () => {
    const { product, bk } = await givenStock();

    expectApiDeclined(
      await api.put(pathOf(bk), { product: { sku: product.sku }, actualLocation: { locationId: 'X' } }),
      {
        status: 404,
        message: 'Location with locationId [X] does not exist',
        messageKey: 'owms.wms.inv.loc.idNotExists',
        obj: ['X'],
        class: 'String',
      },
    );
  });

  it('answers 400 when the target LoadUnit is the source', async () => {
    const { product, bk } = await givenStock();

    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      quantity: aQuantity(2),
      targetTransportUnitBK: bk,
      targetLoadUnitPosition: '1',
    });

    expectValidationError(response, [['target', 'is where the stock already is']]);
    expect(await holders(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it('answers 400 naming a blank target TransportUnit or position, as every other key', async () => {
    const { product, bk } = await givenStock();

    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      quantity: aQuantity(2),
      targetTransportUnitBK: '  ',
      targetLoadUnitPosition: ' ',
    });

    expectValidationError(response, [
      ['targetTransportUnitBK', 'must not be blank'],
      ['targetLoadUnitPosition', 'must not be blank'],
    ]);
    expect(await holders(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it('answers 400 owms.wms.inv.lu.alreadyAssigned when the target holds another Product (D17)', async () => {
    const { product, bk } = await givenStock();
    const other = await givenStock();
    const targetKey = await loadUnitPKey(ctx.db.pool, other.bk, '1');

    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      targetTransportUnitBK: other.bk,
      targetLoadUnitPosition: '1',
    });

    expectApiDeclined(response, {
      status: 400,
      message: `LoadUnit [${targetKey}] is already assigned to or carries another Product than [${product.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [targetKey, product.sku],
      class: 'String',
    });
    expect(await holders(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it.each([
    ['zero', 0],
    ['negative', -5],
  ])('answers 400 for a %s quantity', async (_name, magnitude) => {
    const { product, bk } = await givenStock();
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      quantity: aQuantity(magnitude),
      actualLocation: { locationId },
    });

    expectValidationError(response, [['quantity.magnitude', 'must be greater than 0']]);
  });

  it('answers 400 for a Weight quantity of a Piece product', async () => {
    const { product, bk } = await givenStock();
    const { locationId } = await givenLocation(ctx);

    const response = await api.put(pathOf(bk), {
      product: { sku: product.sku },
      quantity: aQuantity(5, 'MG'),
      actualLocation: { locationId },
    });

    expectValidationError(response, [['quantity', "must be a Piece quantity like the Product's baseUnit"]]);
    expect(await holders(product.sku)).toEqual([`5 PC@${bk}/1`]);
  });

  it('answers 400 when the body names no target or both', async () => {
    const { product, bk } = await givenStock();
    const { locationId } = await givenLocation(ctx);
    const problem = 'give actualLocation, or targetTransportUnitBK and targetLoadUnitPosition';

    expectValidationError(await api.put(pathOf(bk), { product: { sku: product.sku } }), [['actualLocation', problem]]);
    expectValidationError(
      await api.put(pathOf(bk), {
        product: { sku: product.sku },
        actualLocation: { locationId },
        targetTransportUnitBK: bk,
        targetLoadUnitPosition: '2',
      }),
      [['actualLocation', problem]],
    );
  });

  it('answers 404 not.found for an unknown SKU', async () => {
    const { bk } = await givenStock();
    const { locationId } = await givenLocation(ctx);

    expectApiDeclined(await api.put(pathOf(bk), { product: { sku: 'NO-SUCH-SKU' }, actualLocation: { locationId } }), {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });
});
