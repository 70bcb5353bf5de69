import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenGroups,
  givenLocation,
  givenProduct,
  locationPart,
  productPart,
  STOCK_BASE,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  unitView,
  VENDOR_OWMS,
  vendorLinks,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);

describe('POST /v1/packaging-units (packaging-units-createonlocation)', () => {
  it('creates a single unit on a Location: 201, Location header, actualLocation embedded', async () => {
    const product = await givenProduct(ctx);
    const group = uniqueKey('LG');
    await givenGroups(ctx, { name: group });
    const location = await givenLocation(ctx, {
      locationGroupName: group,
      description: 'Shelf 4',
      noMaxTransportUnits: 3,
      plcState: 7,
      incomingActive: false,
    });

    const response = await api.post(
      '/v1/packaging-units',
      aUnit(product.sku, 5, 'PC', { actualLocation: { locationId: location.locationId } }),
    );

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    const actualLocation = await locationPart(ctx, location.locationId);
    expect(actualLocation).toMatchObject({
      locationId: location.locationId,
      erpCode: location.erpCode,
      locationGroupName: group,
      description: 'Shelf 4',
      noMaxTransportUnits: 3,
      plcState: 7,
      incomingActive: false,
      outgoingActive: true,
    });
    const expected = unitView({ product: productPart(product), quantity: aQuantity(5), actualLocation });
    expect(response.body).toEqual([expected]);
    expect(Object.keys(response.body[0])).toEqual(Object.keys(expected));
    const [unit] = response.body as { pKey: string }[];
    expect(response.headers.location).toBe(`${STOCK_BASE}/v1/packaging-units/${unit!.pKey}`);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((stored) => [stored.pKey, stored.holder])).toEqual([
      [unit!.pKey, `@${location.locationId}`],
    ]);
  });

  it('creates an array of units on several Locations, named by locationId or erpCode', async () => {
    const product = await givenProduct(ctx);
    const first = await givenLocation(ctx);
    const second = await givenLocation(ctx);

    const response = await api.post('/v1/packaging-units', [
      aUnit(product.sku, 1, 'PC', { actualLocation: { locationId: first.locationId } }),
      aUnit(product.sku, 2, 'DOZ', { actualLocation: { erpCode: second.erpCode } }),
      aUnit(product.sku, 3, 'PC', { actualLocation: { locationId: first.locationId } }),
    ]);

    expect(response.status).toBe(201);
    const [one, two, three] = response.body as { pKey: string }[];
    expect(response.headers.location).toBe(`${STOCK_BASE}/v1/packaging-units/${one!.pKey}`);
    const firstPart = await locationPart(ctx, first.locationId);
    expect(response.body).toEqual([
      unitView({ product: productPart(product), quantity: aQuantity(1), actualLocation: firstPart }),
      unitView({
        product: productPart(product),
        quantity: aQuantity(2, 'DOZ'),
        actualLocation: await locationPart(ctx, second.locationId),
      }),
      unitView({ product: productPart(product), quantity: aQuantity(3), actualLocation: firstPart }),
    ]);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((stored) => [stored.pKey, stored.holder])).toEqual([
      [one!.pKey, `@${first.locationId}`],
      [two!.pKey, `@${second.locationId}`],
      [three!.pKey, `@${first.locationId}`],
    ]);
  });

  it('answers the vendor type with only a product link for a unit on a Location', async () => {
    const product = await givenProduct(ctx);
    const location = await givenLocation(ctx);

    const response = await api
      .post('/v1/packaging-units', [
        aUnit(product.sku, 1, 'PC', { actualLocation: { locationId: location.locationId } }),
      ])
      .set('Accept', VENDOR_OWMS);

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(`${VENDOR_OWMS}; charset=utf-8`);
    expect(response.body).toEqual([
      unitView({
        product: productPart(product),
        quantity: aQuantity(1),
        actualLocation: await locationPart(ctx, location.locationId),
        links: vendorLinks(product),
      }),
    ]);
  });

  it('answers 404 owms.wms.inv.loc.idNotExists for an unknown locationId and writes nothing', async () => {
    const product = await givenProduct(ctx);
    const known = await givenLocation(ctx);

    const response = await api.post('/v1/packaging-units', [
      aUnit(product.sku, 1, 'PC', { actualLocation: { locationId: known.locationId } }),
      aUnit(product.sku, 1, 'PC', { actualLocation: { locationId: 'NO-SUCH-LOC' } }),
    ]);

    expectApiDeclined(response, {
      status: 404,
      message: 'Location with locationId [NO-SUCH-LOC] does not exist',
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: ['NO-SUCH-LOC'],
      class: 'String',
    });
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('answers 404 owms.wms.inv.loc.erpCodeNotExists for an unknown erpCode', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post(
      '/v1/packaging-units',
      aUnit(product.sku, 1, 'PC', { actualLocation: { erpCode: 'NO-SUCH-ERP' } }),
    );

    expectApiDeclined(response, {
      status: 404,
      message: 'Location with erpCode [NO-SUCH-ERP] does not exist',
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: ['NO-SUCH-ERP'],
      class: 'String',
    });
  });

  it('answers 404 not.found for an unknown SKU', async () => {
    const location = await givenLocation(ctx);

    const response = await api.post(
      '/v1/packaging-units',
      aUnit('NO-SUCH-SKU', 1, 'PC', { actualLocation: { locationId: location.locationId } }),
    );

    expectApiDeclined(response, {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
  });

  it('answers 400 naming the fields of the array item: zero quantity, missing actualLocation', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post('/v1/packaging-units', [
      aUnit(product.sku, 0, 'PC', { actualLocation: { locationId: 'L' } }),
      aUnit(product.sku, 1),
    ]);

    expectValidationError(response, [
      ['[0].quantity.magnitude', 'must be greater than 0'],
      ['[1].actualLocation', 'required'],
    ]);
  });

  it('answers 400 naming the quantity for a Weight quantity of a Piece product', async () => {
    const product = await givenProduct(ctx);
    const location = await givenLocation(ctx);
    const unit = aUnit(product.sku, 1, 'KG', { actualLocation: { locationId: location.locationId } });

    expectValidationError(await api.post('/v1/packaging-units', unit), [
      ['quantity', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    expectValidationError(await api.post('/v1/packaging-units', [unit]), [
      ['[0].quantity', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });
});
