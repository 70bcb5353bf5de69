import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenGroups,
  givenLoadUnitLocked,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  uniqueKey,
  VENDOR_OWMS,
  type SeededProduct,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const keysOf = (body: unknown): string[] => (body as { pKey: string }[]).map((unit) => unit.pKey);

describe('GET /v1/packaging-units?productPKey=&locationGroupName= (packaging-units-findforproductinlg)', () => {
  let product: SeededProduct;
  const parent = uniqueKey('LG-PARENT');
  const child = uniqueKey('LG-CHILD');
  const elsewhere = uniqueKey('LG-OTHER');
  const expected = { onTransportUnitInChild: '', looseInChild: '', looseInParent: '' };

  beforeAll(async () => {
    product = await givenProduct(ctx);
    await givenGroups(ctx, { name: child, parent }, { name: parent }, { name: elsewhere });
    const childLocation = await givenLocation(ctx, { locationGroupName: child });
    const parentLocation = await givenLocation(ctx, { locationGroupName: parent });
    const otherLocation = await givenLocation(ctx, { locationGroupName: elsewhere });

    const inChild = await givenTransportUnitOn(ctx, childLocation.locationId, 'EURO');
    expected.onTransportUnitInChild = (await givenUnitsInLoadUnit(ctx, inChild, '1', [aUnit(product.sku, 5)]))[0]!.pKey;
    const lockedInChild = await givenTransportUnitOn(ctx, childLocation.locationId, 'EURO');
    await givenUnitsInLoadUnit(ctx, lockedInChild, '1', [aUnit(product.sku, 9)]);
    await givenLoadUnitLocked(ctx, await loadUnitPKey(ctx.db.pool, lockedInChild, '1'));
    expected.looseInChild = (await givenUnitOnLocation(ctx, product.sku, childLocation.locationId, 3)).pKey;
    expected.looseInParent = (await givenUnitOnLocation(ctx, product.sku, parentLocation.locationId, 1)).pKey;

    const inOther = await givenTransportUnitOn(ctx, otherLocation.locationId, 'EURO');
    await givenUnitsInLoadUnit(ctx, inOther, '1', [aUnit(product.sku, 4)]);
    await givenUnitOnLocation(ctx, product.sku, otherLocation.locationId, 2);
    const nowhere = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, nowhere, '1', [aUnit(product.sku, 6)]);
  });

  it('finds the reservable units of a parent group and its child groups, on TransportUnits and loose', async () => {
    const response = await api.get(`/v1/packaging-units?productPKey=${product.pKey}&locationGroupName=${parent}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(keysOf(response.body)).toEqual([
      expected.onTransportUnitInChild,
      expected.looseInChild,
      expected.looseInParent,
    ]);
    expect(response.body[0]).not.toHaveProperty('links');
  });

  it('finds only the child group’s units when the child is named, sorted as asked', async () => {
    const response = await api.get(
      `/v1/packaging-units?productPKey=${product.pKey}&locationGroupName=${child}&sortDirection=asc&sortProperty=quantity`,
    );

    expect(keysOf(response.body)).toEqual([expected.looseInChild, expected.onTransportUnitInChild]);
  });

  it('answers the vendor type with links', async () => {
    const response = await api.get(
      `/v1/packaging-units?productPKey=${product.pKey}&locationGroupName=${child}`,
      VENDOR_OWMS,
    );

    expect(response.headers['content-type']).toBe(`${VENDOR_OWMS}; charset=utf-8`);
    expect((response.body as { links: { rel: string }[] }[]).map((unit) => unit.links.map((link) => link.rel))).toEqual(
      [['loadUnit', 'transportUnit', 'product'], ['product']],
    );
  });

  it('answers 404 owms.common.common.lg.notFoundByName for an unknown group', async () => {
    const response = await api.get(`/v1/packaging-units?productPKey=${product.pKey}&locationGroupName=NO-SUCH-LG`);

    expectApiDeclined(response, {
      status: 404,
      message: 'LocationGroup with name [NO-SUCH-LG] not found',
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: ['NO-SUCH-LG'],
      class: 'String',
    });
  });

  it('answers 404 owms.wms.inv.product.notFoundByPKey for an unknown product key', async () => {
    const pKey = '4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a002';

    expectApiDeclined(await api.get(`/v1/packaging-units?productPKey=${pKey}&locationGroupName=${parent}`), {
      status: 404,
      message: `No Product with pKey [${pKey}] exists`,
      messageKey: 'owms.wms.inv.product.notFoundByPKey',
      obj: [pKey],
      class: 'String',
    });
  });

  it('answers 400 when locationGroupName or productPKey is missing', async () => {
    expectValidationError(await api.get(`/v1/packaging-units?productPKey=${product.pKey}`), [
      ['locationGroupName', 'required'],
    ]);
    expectValidationError(await api.get(`/v1/packaging-units?locationGroupName=${parent}`), [
      ['productPKey', 'required'],
    ]);
  });
});

describe('GET /v1/packaging-units?locationId= and the parameter rules', () => {
  it('lists every unit lying on the Location, in any state', async () => {
    const available = await givenProduct(ctx);
    const lockedProduct = await givenProduct(ctx, { availabilityState: 'LOCKED' });
    const { locationId } = await givenLocation(ctx);
    const other = await givenLocation(ctx);
    const first = await givenUnitOnLocation(ctx, available.sku, locationId, 2);
    const second = await givenUnitOnLocation(ctx, lockedProduct.sku, locationId, 3);
    await givenUnitOnLocation(ctx, available.sku, other.locationId, 1);
    const bk = uniqueKey('TU');
    const [problem] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(available.sku, 4)]);
    await api
      .post(`/v1/transport-units/${bk}/load-units/1/packaging-units/failures`, {
        product: { sku: available.sku },
        quantity: aQuantity(4),
      })
      .expect(204);
    await api.put(`/v1/packaging-units/${problem!.pKey}`, { actualLocation: { locationId } }).expect(200);

    const response = await api.get(`/v1/packaging-units?locationId=${locationId}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(keysOf(response.body)).toEqual([first.pKey, second.pKey, problem!.pKey]);
    expect((response.body as { state: string }[]).map((unit) => unit.state)).toEqual([
      'AVAILABLE',
      'AVAILABLE',
      'LOCKED',
    ]);
  });

  it('answers an empty list for a Location without units and 404 for an unknown one', async () => {
    const { locationId } = await givenLocation(ctx);
    expect((await api.get(`/v1/packaging-units?locationId=${locationId}`)).body).toEqual([]);

    expectApiDeclined(await api.get('/v1/packaging-units?locationId=NO-SUCH-LOC'), {
      status: 404,
      message: 'Location with locationId [NO-SUCH-LOC] does not exist',
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: ['NO-SUCH-LOC'],
      class: 'String',
    });
  });

  it.each([[''], ['?sku=A&locationId=B'], ['?amount=5']])('answers 400 for the parameters "%s"', async (query) => {
    expectValidationError(await api.get(`/v1/packaging-units${query}`), [
      ['query', 'give sku, or productPKey with locationGroupName, or locationId'],
    ]);
  });
});
