import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule, UNITS_PKG, uniqueSku } from '../support/builders.js';
import {
  BASE_URL,
  createProduct,
  expectCreatedOne,
  expectedProduct,
  HAL_JSON_UTF8,
  ISO_UTC_MILLIS,
  PRODUCT_FIELDS,
  productApi,
  skuCount,
  UUID,
} from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

describe('POST /v1/products', () => {
  it('creates one Product sent as a plain object and answers 201 with its absolute Location and no body', async () => {
    const product = aProduct();
    const pKey = expectCreatedOne(await api.create(product));

    const stored = await ctx.db.pool.query('SELECT p_key::text AS "pKey" FROM product WHERE sku = $1', [product.sku]);
    expect(stored.rows).toEqual([{ pKey }]);
  });

  it('creates one Product sent as an array of one and answers 201 with its Location', async () => {
    const product = aProduct();
    const pKey = expectCreatedOne(await api.create([product]));

    const found = await api.findByPKey(pKey);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ pKey, sku: product.sku });
  });

  it('creates several Products in one request and answers 201 without a Location header', async () => {
    const products = [aProduct(), aProduct(), aProduct()];
    const response = await api.create(products);

    expect(response.status).toBe(201);
    expect(response.text).toBe('');
    expect(response.headers.location).toBeUndefined();
    expect(
      await skuCount(
        ctx.db.pool,
        products.map((product) => product.sku),
      ),
    ).toBe(3);
  });

  it('gives back every Product field it was sent, by SKU and by pKey, in the spec order', async () => {
    const stacked = aProduct();
    await createProduct(api, stacked);
    const unitDetails = { piecesPerLayer: '6', numbersOfLayers: '4', carrierType: 'EURO' };
    const product = aProduct({
      label: 'LBL-4711',
      accountId: 'ACC-1',
      baseUnit: aQuantity(1, 'PC'),
      description: 'Screws M4, zinc plated',
      availabilityState: 'QC_LOCKED',
      classification: 'hazardous',
      group: 'fasteners',
      stockZone: 'B',
      overbookingAllowed: true,
      units: [
        aProductUnit({
          label: 'Carton',
          code: 'CRT',
          description: 'Carton of two dozen',
          quantity: aQuantity(2, 'DOZ'),
          dimension: { height: 10, length: 20, width: 30, uom: 'CM' },
          details: unitDetails,
        }),
        aProductUnit({ code: 'BOX', quantity: aQuantity(6, 'PC') }),
      ],
      dimension: { height: 1.5, length: 2, width: 0.3, uom: 'MM' },
      stackingRules: [aStackingRule(stacked.sku, 3)],
      details: { erp: { id: 'X-1', weight: 0.1, flags: [true, null] } },
    });

    const pKey = await createProduct(api, product);
    const bySku = await api.findBySku(product.sku);
    const byPKey = await api.findByPKey(pKey);

    const expected = {
      pKey,
      sku: product.sku,
      label: 'LBL-4711',
      accountId: 'ACC-1',
      baseUnit: { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 1 },
      description: 'Screws M4, zinc plated',
      availabilityState: 'QC_LOCKED',
      classification: 'hazardous',
      group: 'fasteners',
      stockZone: 'B',
      overbookingAllowed: true,
      units: [
        {
          pKey: expect.stringMatching(UUID),
          label: 'Carton',
          code: 'CRT',
          description: 'Carton of two dozen',
          quantity: { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'DOZ'], magnitude: 2 },
          dimension: { height: 10, length: 20, width: 30, uom: 'CM' },
          details: unitDetails,
        },
        {
          pKey: expect.stringMatching(UUID),
          code: 'BOX',
          quantity: { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 6 },
        },
      ],
      dimension: { height: 1.5, length: 2, width: 0.3, uom: 'MM' },
      stackingRules: [{ noProducts: 3, allowedProduct: { sku: stacked.sku } }],
      details: { erp: { id: 'X-1', weight: 0.1, flags: [true, null] } },
      ol: 0,
      createDt: expect.stringMatching(ISO_UTC_MILLIS),
      _links: {
        self: { href: `${BASE_URL}/v1/products/${pKey}` },
        'packaging-units': { href: `${BASE_URL}/v1/packaging-units?sku=${encodeURIComponent(product.sku)}` },
        stock: { href: `${BASE_URL}/v1/stock?sku=${encodeURIComponent(product.sku)}` },
      },
    };
    for (const response of [bySku, byPKey]) {
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
      expect(response.body).toEqual(expected);
      expect(Object.keys(response.body as object)).toEqual([...PRODUCT_FIELDS, '_links']);
      expect(Object.keys(response.body.units[0])).toEqual([
        'pKey',
        'label',
        'code',
        'description',
        'quantity',
        'dimension',
        'details',
      ]);
    }
    expect(byPKey.body).toEqual(bySku.body);
  });

  it('writes createDt as the stored creation time in UTC with milliseconds', async () => {
    const product = aProduct();
    const before = Date.now();
    const pKey = await createProduct(api, product);
    const { body } = await api.findByPKey(pKey);

    const stored = await ctx.db.pool.query<{ createDt: Date }>(
      'SELECT create_dt AS "createDt" FROM product WHERE p_key = $1',
      [pKey],
    );
    expect(body.createDt).toMatch(ISO_UTC_MILLIS);
    expect(body.createDt).toBe(stored.rows[0]?.createDt.toISOString());
    expect(Date.parse(body.createDt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.createDt)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('fills in ol 0, AVAILABLE, overbookingAllowed false and empty units and stackingRules when only sku and baseUnit are sent', async () => {
    const product = aProduct();
    const pKey = await createProduct(api, product);
    const { body } = await api.findByPKey(pKey);

    expect(body).toEqual({
      pKey,
      sku: product.sku,
      baseUnit: aQuantity(1, 'PC'),
      availabilityState: 'AVAILABLE',
      overbookingAllowed: false,
      units: [],
      stackingRules: [],
      ol: 0,
      createDt: expect.stringMatching(ISO_UTC_MILLIS),
      _links: expect.any(Object),
    });
  });

  it('fills in @class on output when the input left it out', async () => {
    const product = aProduct({
      baseUnit: { unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 5 },
      units: [{ quantity: { unitType: [`${UNITS_PKG}.PieceUnit`, 'DOZ'], magnitude: 1 } }],
    });
    const pKey = await createProduct(api, product);
    const { body } = await api.findByPKey(pKey);

    expect(body.baseUnit).toEqual(aQuantity(5, 'PC'));
    expect(Object.keys(body.baseUnit as object)).toEqual(['@class', 'unitType', 'magnitude']);
    expect(body.units[0].quantity).toEqual(aQuantity(1, 'DOZ'));
  });

  it.each(['MG', 'G', 'KG', 'T'])('stores a Weight Product in %s with Weight units', async (code) => {
    const product = aProduct({
      baseUnit: aQuantity(250, code),
      units: [aProductUnit({ code: 'BAG', quantity: aQuantity(0.5, 'KG') })],
    });
    const pKey = await createProduct(api, product);
    const { body } = await api.findByPKey(pKey);

    expect(body.baseUnit).toEqual({
      '@class': `${UNITS_PKG}.Weight`,
      unitType: [`${UNITS_PKG}.WeightUnit`, code],
      magnitude: 250,
    });
    expect(body.units[0].quantity).toEqual({
      '@class': `${UNITS_PKG}.Weight`,
      unitType: [`${UNITS_PKG}.WeightUnit`, 'KG'],
      magnitude: 0.5,
    });
  });

  it('keeps the magnitudes 0.1 and 0.3 exact, never 0.30000000000000004 or 0.100', async () => {
    const product = aProduct({
      baseUnit: aQuantity(0.1, 'KG'),
      units: [aProductUnit({ quantity: aQuantity(0.3, 'KG') }), aProductUnit({ quantity: aQuantity(0.000001, 'T') })],
    });
    const pKey = await createProduct(api, product);
    const response = await api.findByPKey(pKey);

    expect(response.text).toContain(`"unitType":["${UNITS_PKG}.WeightUnit","KG"],"magnitude":0.1}`);
    expect(response.text).toContain(`"unitType":["${UNITS_PKG}.WeightUnit","KG"],"magnitude":0.3}`);
    expect(response.text).toContain(`"unitType":["${UNITS_PKG}.WeightUnit","T"],"magnitude":0.000001}`);
    const stored = await ctx.db.pool.query('SELECT base_unit_magnitude::text AS base FROM product WHERE p_key = $1', [
      pKey,
    ]);
    expect(stored.rows).toEqual([{ base: '0.1' }]);
  });

  it('ignores unknown fields and the read-only pKey, ol and createDt a client sends (D9)', async () => {
    const clientKey = '00000000-0000-4000-8000-000000000000';
    const product = aProduct({
      pKey: clientKey,
      ol: 7,
      createDt: '2001-01-01T00:00:00.000Z',
      colour: 'red',
      _links: { self: { href: 'http://elsewhere/' } },
      units: [aProductUnit({ pKey: clientKey, weight: 3 })],
    });
    const pKey = await createProduct(api, product);
    const { body } = await api.findByPKey(pKey);

    expect(pKey).not.toBe(clientKey);
    expect(body).toEqual({
      ...expectedProduct(product, { pKey, createDt: expect.stringMatching(ISO_UTC_MILLIS) }),
      _links: expect.any(Object),
    });
    expect(body.units[0].pKey).not.toBe(clientKey);
    expect(Date.parse(body.createDt)).toBeGreaterThan(Date.parse('2020-01-01T00:00:00Z'));
    expect(await api.findByPKey(clientKey).then((response) => response.status)).toBe(404);
  });

  it('answers every created Product with a random UUID pKey of its own', async () => {
    const products = [aProduct({ sku: uniqueSku('UUID') }), aProduct({ sku: uniqueSku('UUID') })];
    await api.create(products).expect(201);

    const stored = await ctx.db.pool.query<{ pKey: string }>(
      'SELECT p_key::text AS "pKey" FROM product WHERE sku = ANY($1)',
      [products.map((product) => product.sku)],
    );
    const keys = stored.rows.map((row) => row.pKey);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    for (const key of keys) expect(key).toMatch(UUID);
  });
});
