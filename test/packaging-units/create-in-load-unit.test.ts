import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenProduct,
  loadUnitPart,
  loadUnitPKey,
  productPart,
  STOCK_BASE,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  unitView,
  UUID,
  VENDOR_OPENWMS,
  vendorLinks,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const createPath = (bk: string, luPos: string, loadUnitType?: string): string =>
  `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units` +
  (loadUnitType === undefined ? '' : `?loadUnitType=${loadUnitType}`);

async function rowCount(table: string, where = 'true', values: unknown[] = []): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, values);
  return Number(rows[0]!.n);
}

describe('POST /v1/transport-units/{bk}/load-units/{luPos}/packaging-units (packaging-units-create)', () => {
  it('creates the units, the LoadUnit and the TransportUnit on the spot: 201, Location of the first, the units', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(createPath(bk, '1', 'PALLET'), {
      packagingUnits: [aUnit(product.sku, 3), aUnit(product.sku, 2, 'DOZ')],
    });

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '1');
    const loadUnit = loadUnitPart(luPKey, bk, '1', 'PALLET');
    const expected = [
      unitView({ product: productPart(product), quantity: aQuantity(3), loadUnit }),
      unitView({ product: productPart(product), quantity: aQuantity(2, 'DOZ'), loadUnit }),
    ];
    expect(response.body).toEqual(expected);
    expect(Object.keys(response.body[0])).toEqual(Object.keys(expected[0]!));
    const [first, second] = response.body as { pKey: string }[];
    expect(response.headers.location).toBe(`${STOCK_BASE}/v1/packaging-units/${first!.pKey}`);
    expect(first!.pKey).not.toBe(second!.pKey);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => [unit.pKey, unit.quantity])).toEqual([
      [first!.pKey, '3 PC'],
      [second!.pKey, '2 DOZ'],
    ]);
    expect(await rowCount('transport_unit', 'bk = $1', [bk])).toBe(1);
    const { rows } = await ctx.db.pool.query('SELECT load_unit_type, product_id FROM load_unit WHERE p_key = $1', [
      luPKey,
    ]);
    expect(rows).toEqual([{ load_unit_type: 'PALLET', product_id: product.id }]);
  });

  it('accepts a bare array and an existing LoadUnit without loadUnitType', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await api.post(createPath(bk, '1', 'BOX'), [aUnit(product.sku, 1)]).expect(201);

    const response = await api.post(createPath(bk, '1'), [aUnit(product.sku, 4)]);

    expect(response.status).toBe(201);
    expect(response.body).toEqual([
      unitView({
        product: productPart(product),
        quantity: aQuantity(4),
        loadUnit: loadUnitPart(await loadUnitPKey(ctx.db.pool, bk, '1'), bk, '1'),
      }),
    ]);
    expect(
      await rowCount('load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id', 'tu.bk = $1', [bk]),
    ).toBe(1);
  });

  it('answers the vendor type with links when it is asked for', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api
      .post(createPath(bk, '7', 'BOX'), { packagingUnits: [aUnit(product.sku, 1)] })
      .set('Accept', VENDOR_OPENWMS);

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(`${VENDOR_OPENWMS}; charset=utf-8`);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '7');
    expect(response.body).toEqual([
      unitView({
        product: productPart(product),
        quantity: aQuantity(1),
        loadUnit: loadUnitPart(luPKey, bk, '7'),
        links: vendorLinks(product, { pKey: luPKey, bk }),
      }),
    ]);
  });

  it.each([
    ['missing', undefined],
    ['blank', ''],
  ])('answers 400 owms.wms.inv.pu.loadUnitTypeMissing [luPos, bk] when loadUnitType is %s', async (_name, type) => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(createPath(bk, '3', type), { packagingUnits: [aUnit(product.sku, 1)] });

    expectApiDeclined(response, {
      status: 400,
      message: `The LoadUnit at position [3] on TransportUnit [${bk}] must be created, but no loadUnitType was given`,
      messageKey: 'owms.wms.inv.pu.loadUnitTypeMissing',
      obj: ['3', bk],
      class: 'String',
    });
    expect(await rowCount('transport_unit', 'bk = $1', [bk])).toBe(0);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('answers 400 naming loadUnitType when it is longer than 255 characters, and creates nothing', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(createPath(bk, '3', 'T'.repeat(256)), [aUnit(product.sku, 1)]);

    expectValidationError(response, [['loadUnitType', 'Too big: expected string to have <=255 characters']]);
    expect(await rowCount('transport_unit', 'bk = $1', [bk])).toBe(0);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('answers 404 not.found for an unknown SKU and writes nothing', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(createPath(bk, '1', 'BOX'), [aUnit(product.sku, 1), aUnit('NO-SUCH-SKU', 1)]);

    expectApiDeclined(response, {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
    expect(await rowCount('transport_unit', 'bk = $1', [bk])).toBe(0);
  });

  it('answers 400 naming packagingUnits[0].quantity for a Weight quantity of a Piece product', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), {
      packagingUnits: [aUnit(product.sku, 1, 'KG')],
    });

    expectValidationError(response, [
      ['packagingUnits[0].quantity', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('names the bare array item [1].quantity for a Weight quantity of a Piece product', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), [
      aUnit(product.sku, 1),
      aUnit(product.sku, 5, 'G'),
    ]);

    expectValidationError(response, [['[1].quantity', "must be a Piece quantity like the Product's baseUnit"]]);
  });

  it.each([
    ['zero', 0],
    ['negative', -2],
  ])('answers 400 naming the magnitude for a %s quantity', async (_name, magnitude) => {
    const product = await givenProduct(ctx);

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), {
      packagingUnits: [aUnit(product.sku, magnitude)],
    });

    expectValidationError(response, [['packagingUnits[0].quantity.magnitude', 'must be greater than 0']]);
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([]);
  });

  it('answers 400 naming the magnitude for a zero quantity in a bare array', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), [aUnit(product.sku, 0)]);

    expectValidationError(response, [['[0].quantity.magnitude', 'must be greater than 0']]);
  });

  it('answers 400 naming a missing product.sku', async () => {
    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), {
      packagingUnits: [{ product: {}, quantity: aQuantity(1) }],
    });

    expectValidationError(response, [['packagingUnits[0].product.sku', 'required']]);
  });

  it('answers 400 for expiresAt without an offset', async () => {
    const product = await givenProduct(ctx);

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), {
      packagingUnits: [aUnit(product.sku, 1, 'PC', { expiresAt: '2030-01-01T10:00:00' })],
    });

    expectValidationError(response, [['packagingUnits[0].expiresAt', 'must be an ISO 8601 datetime with an offset']]);
  });

  it('creates stock of a LOCKED product (D18)', async () => {
    const product = await givenProduct(ctx, { availabilityState: 'LOCKED' });

    const response = await api.post(createPath(uniqueKey('TU'), '1', 'BOX'), [aUnit(product.sku, 2)]);

    expect(response.status).toBe(201);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => [unit.quantity, unit.state])).toEqual([
      ['2 PC', 'AVAILABLE'],
    ]);
  });

  it('round-trips the optional fields and ignores a client-sent pKey', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const clientKey = '00000000-0000-4000-8000-000000000001';

    const response = await api.post(createPath(bk, '1', 'BOX'), {
      packagingUnits: [
        aUnit(product.sku, 6, 'PC', {
          pKey: clientKey,
          serialNumber: 'SN-4711',
          expiresAt: '2030-05-01T12:30:15.5+02:00',
          labels: ['fragile', 'cold'],
          dimension: { height: 10, length: 20.5, width: 30 },
          weight: aQuantity(1250.5, 'G'),
          distribution: { piecesPerLoadUnitLayer: 4, numberOfLoadUnitLayers: 2, carrierType: 'EURO' },
          physicalPosition: 'front-left',
          details: { batch: 'B-7', grade: 'A' },
        }),
        aUnit(product.sku, 1, 'PC', { distribution: { piecesPerLayer: 8, numberOfLayers: 3 } }),
      ],
    });

    expect(response.status).toBe(201);
    const loadUnit = loadUnitPart(await loadUnitPKey(ctx.db.pool, bk, '1'), bk, '1');
    expect(response.body).toEqual([
      unitView({
        product: productPart(product),
        quantity: aQuantity(6),
        loadUnit,
        dimension: { height: 10, length: 20.5, width: 30 },
        weight: aQuantity(1250.5, 'G'),
        distribution: { piecesPerLayer: 4, numberOfLayers: 2, carrierType: 'EURO' },
        physicalPosition: 'front-left',
        serialNumber: 'SN-4711',
        expiresAt: '2030-05-01T10:30:15.500Z',
        labels: ['fragile', 'cold'],
        details: { batch: 'B-7', grade: 'A' },
      }),
      unitView({
        product: productPart(product),
        quantity: aQuantity(1),
        loadUnit,
        distribution: { piecesPerLayer: 8, numberOfLayers: 3 },
      }),
    ]);
    const [first] = response.body as { pKey: string }[];
    expect(first!.pKey).toMatch(UUID);
    expect(first!.pKey).not.toBe(clientKey);
    const single = await api.get(`/v1/packaging-units/${first!.pKey}`);
    expect(single.body).toMatchObject({ serialNumber: 'SN-4711', expiresAt: '2030-05-01T10:30:15.500Z' });
  });
});
