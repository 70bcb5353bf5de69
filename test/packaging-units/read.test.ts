import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiDeclined } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { expectServerDeclined, HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  loadUnitPart,
  loadUnitPKey,
  locationPart,
  productPart,
  STOCK_BASE,
  stockApi,
  uniqueKey,
  unitView,
  VENDOR_OPENWMS,
  VENDOR_OWMS,
  vendorLinks,
  type SeededProduct,
  type UnitJson,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);

/** One TransportUnit with LoadUnits "1" (3 PC, 1 DOZ) and "2" (7 PC), and a unit on a Location. */
let product: SeededProduct;
let other: SeededProduct;
let bk: string;
let lu1: string;
let lu2: string;
let inLu1: UnitJson[];
let inLu2: UnitJson[];
let onLocation: UnitJson;
let locationId: string;

beforeAll(async () => {
  product = await givenProduct(ctx);
  other = await givenProduct(ctx);
  bk = uniqueKey('TU');
  inLu2 = await givenUnitsInLoadUnit(ctx, bk, '2', [aUnit(other.sku, 7)], 'PALLET');
  inLu1 = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 3), aUnit(product.sku, 1, 'DOZ')]);
  lu1 = await loadUnitPKey(ctx.db.pool, bk, '1');
  lu2 = await loadUnitPKey(ctx.db.pool, bk, '2');
  ({ locationId } = await givenLocation(ctx));
  onLocation = await givenUnitOnLocation(ctx, product.sku, locationId, 4);
});

const lu1Units = (links = false): unknown[] => [
  unitView({
    pKey: inLu1[0]!.pKey,
    product: productPart(product),
    quantity: aQuantity(3),
    loadUnit: loadUnitPart(lu1, bk, '1'),
    ...(links && { links: vendorLinks(product, { pKey: lu1, bk }) }),
  }),
  unitView({
    pKey: inLu1[1]!.pKey,
    product: productPart(product),
    quantity: aQuantity(1, 'DOZ'),
    loadUnit: loadUnitPart(lu1, bk, '1'),
    ...(links && { links: vendorLinks(product, { pKey: lu1, bk }) }),
  }),
];
const lu2Units = (): unknown[] => [
  unitView({
    pKey: inLu2[0]!.pKey,
    product: productPart(other),
    quantity: aQuantity(7),
    loadUnit: loadUnitPart(lu2, bk, '2', 'PALLET'),
  }),
];

describe('GET /v1/packaging-units/{pKey} (packaging-units-findbypkey)', () => {
  it('answers HAL with the fields in the spec order, qtyAvailable and self, product, loadUnit, transportUnit links', async () => {
    const response = await api.get(`/v1/packaging-units/${inLu1[1]!.pKey}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const expected = unitView({
      pKey: inLu1[1]!.pKey,
      product: productPart(product),
      quantity: aQuantity(1, 'DOZ'),
      qtyAvailable: aQuantity(1, 'DOZ'),
      loadUnit: loadUnitPart(lu1, bk, '1'),
      _links: {
        self: { href: `${STOCK_BASE}/v1/packaging-units/${inLu1[1]!.pKey}` },
        loadUnit: { href: `${STOCK_BASE}/v1/load-units/${lu1}` },
        transportUnit: { href: `${STOCK_BASE}/v1/transport-units?bk=${bk}` },
        product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
      },
    });
    expect(response.body).toEqual(expected);
    expect(Object.keys(response.body as object)).toEqual(Object.keys(expected));
  });

  it('answers a unit on a Location with actualLocation and only self and product links', async () => {
    const response = await api.get(`/v1/packaging-units/${onLocation.pKey}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      unitView({
        pKey: onLocation.pKey,
        product: productPart(product),
        quantity: aQuantity(4),
        actualLocation: await locationPart(ctx, locationId),
        _links: {
          self: { href: `${STOCK_BASE}/v1/packaging-units/${onLocation.pKey}` },
          product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
        },
      }),
    );
  });

  it.each([['4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a000'], ['not-a-key']])(
    'answers 404 owms.wms.inv.pu.pKeyNotExists for the unknown or malformed key %s',
    async (pKey) => {
      expectApiDeclined(await api.get(`/v1/packaging-units/${pKey}`), {
        status: 404,
        message: `No PackagingUnit with pKey [${pKey}] exists`,
        messageKey: 'owms.wms.inv.pu.pKeyNotExists',
        obj: [pKey],
        class: 'String',
      });
    },
  );
});

describe('PackagingUnit lists on TransportUnits and LoadUnits', () => {
  it.each([['v1'], ['v2']])(
    'findontu /%s lists every unit on the TransportUnit by LoadUnit position, as plain JSON without links',
    async (version) => {
      const response = await api.get(`/${version}/transport-units/${bk}/load-units/packaging-units`);

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(JSON_UTF8);
      expect(response.body).toEqual([...lu1Units(), ...lu2Units()]);
    },
  );

  it.each([[VENDOR_OPENWMS], [VENDOR_OWMS]])('findontu answers %s with that type and links', async (type) => {
    const response = await api.get(`/v2/transport-units/${bk}/load-units/packaging-units`, type);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(`${type}; charset=utf-8`);
    expect(response.body).toEqual([
      ...lu1Units(true),
      unitView({
        pKey: inLu2[0]!.pKey,
        product: productPart(other),
        quantity: aQuantity(7),
        loadUnit: loadUnitPart(lu2, bk, '2', 'PALLET'),
        links: vendorLinks(other, { pKey: lu2, bk }),
      }),
    ]);
  });

  it('findontu answers an empty list for a TransportUnit without units', async () => {
    const response = await api.get(`/v1/transport-units/${uniqueKey('TU')}/load-units/packaging-units`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('findontuandlu lists the units of one LoadUnit', async () => {
    const response = await api.get(`/v1/transport-units/${bk}/load-units/1/packaging-units`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual(lu1Units());
  });

  it('findontuandlu answers the vendor type with links', async () => {
    const response = await api.get(`/v1/transport-units/${bk}/load-units/1/packaging-units`, VENDOR_OPENWMS);

    expect(response.headers['content-type']).toBe(`${VENDOR_OPENWMS}; charset=utf-8`);
    expect(response.body).toEqual(lu1Units(true));
  });

  it('lu-findpuinlu lists the units of a LoadUnit by its pKey, each with the embedded loadUnit', async () => {
    const response = await api.get(`/v1/load-units/${lu2}/packaging-units`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual(lu2Units());
  });

  it('lu-findpuinlu answers 404 owms.wms.inv.lu.pKeyNotExists for an unknown LoadUnit', async () => {
    const pKey = '4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a001';

    expectApiDeclined(await api.get(`/v1/load-units/${pKey}/packaging-units`), {
      status: 404,
      message: `LoadUnit with pKey [${pKey}] does not exist`,
      messageKey: 'owms.wms.inv.lu.pKeyNotExists',
      obj: [pKey],
      class: 'String',
    });
  });

  it('the Location finder answers the vendor type with only a product link', async () => {
    const response = await api.get(`/v1/packaging-units?locationId=${locationId}`, VENDOR_OWMS);

    expect(response.headers['content-type']).toBe(`${VENDOR_OWMS}; charset=utf-8`);
    expect(response.body).toEqual([
      unitView({
        pKey: onLocation.pKey,
        product: productPart(product),
        quantity: aQuantity(4),
        actualLocation: await locationPart(ctx, locationId),
        links: vendorLinks(product),
      }),
    ]);
  });

  it('answers 406 in the server-declined format for Accept: application/xml on a list', async () => {
    const path = `/v1/transport-units/${bk}/load-units/packaging-units`;

    expectServerDeclined(await api.get(path, 'application/xml'), {
      status: 406,
      error: 'Not Acceptable',
      exception: 'HttpMediaTypeNotAcceptableException',
      message: /^No acceptable representation/,
      path,
    });
  });
});
