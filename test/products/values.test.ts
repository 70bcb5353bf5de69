import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aQuantity, UNITS_PKG, uniqueSku } from '../support/builders.js';
import { BASE_URL, createProduct, expectCreatedOne, HAL_JSON_UTF8, productApi, rowCounts } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

const PIECE_UNIT = `"unitType":["${UNITS_PKG}.PieceUnit","PC"]`;

describe('values that are easy to lose on the way to the database and back', () => {
  it('keeps a 21-digit magnitude 123456789012345.123456 exactly, which a double would round', async () => {
    const sku = uniqueSku('BIG');
    const pKey = expectCreatedOne(
      await api.createRaw(`{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":123456789012345.123456}}`),
    );

    const bySku = await api.findBySku(sku);
    const byPKey = await api.findByPKey(pKey);
    const all = await api.find();
    for (const response of [bySku, byPKey, all]) {
      expect(response.status).toBe(200);
      expect(response.text).toContain(
        `"baseUnit":{"@class":"${UNITS_PKG}.Piece",${PIECE_UNIT},"magnitude":123456789012345.123456}`,
      );
    }
    const stored = await ctx.db.pool.query('SELECT base_unit_magnitude::text AS m FROM product WHERE sku = $1', [sku]);
    expect(stored.rows).toEqual([{ m: '123456789012345.123456' }]);
  });

  it('keeps every digit of numbers in details, also those a double cannot hold', async () => {
    const sku = uniqueSku('DIGITS');
    const details = '{"ean":40123456789012345678,"ratio":0.1,"price":19.990000000000000001,"exp":1e400}';
    const pKey = expectCreatedOne(
      await api.createRaw(`{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":1},"details":${details}}`),
    );

    const response = await api.findByPKey(pKey);
    expect(response.status).toBe(200);
    expect(response.text).toContain(`"details":${details}`);
  });

  it('stores a description of the longest length, 4,000 characters of many scripts, and reads it back unchanged', async () => {
    const pattern = 'Größe 10 € / 日本 — ';
    const description = pattern.repeat(Math.ceil(4000 / pattern.length)).slice(0, 4000);
    expect(description.length).toBe(4000);
    const pKey = await createProduct(api, aProduct({ description }));

    const response = await api.findByPKey(pKey);
    expect(response.status).toBe(200);
    expect(response.body.description).toBe(description);
  });

  it.each([
    ['a plain body', ''],
    ['a body that also holds a number too long for a double', ',"big":123456789012345678901234567890'],
  ])(
    'stores __proto__ and constructor keys in details exactly, without polluting Object.prototype, from %s',
    async (_body, extra) => {
      const sku = uniqueSku('PROTO');
      const details =
        '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"nested":{"__proto__":[1,2]}}';
      const pKey = expectCreatedOne(
        await api.createRaw(`{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":1},"details":${details}${extra}}`),
      );

      for (const response of [await api.findByPKey(pKey), await api.findBySku(sku)]) {
        expect(response.status).toBe(200);
        expect(response.text).toContain(`"details":${details}`);
        const parsed = JSON.parse(response.text) as { details: object };
        expect(Object.keys(parsed.details)).toEqual(['__proto__', 'constructor', 'nested']);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    },
  );

  it.each([
    ['unicode', 'Ünïcødé-日本-😀'],
    ['spaces', 'with  two spaces'],
    ['leading and trailing spaces', ' padded '],
    ['a slash', 'A/B/C'],
    ['a percent sign', '100%'],
    ['a percent escape', 'A%2FB'],
    ['a question mark', 'what?'],
    ['an ampersand and equals', 'R&D=1'],
    ['a plus', 'C++'],
    ['a hash', '#1'],
    ['quotes and a backslash', `it's "quoted" \\`],
  ])('finds a SKU with %s through ?sku= and gives it back unchanged', async (_what, sku) => {
    const pKey = await createProduct(api, aProduct({ sku }));

    const response = await api.findBySku(sku);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body.pKey).toBe(pKey);
    expect(response.body.sku).toBe(sku);
    expect(response.body._links['packaging-units']).toEqual({
      href: `${BASE_URL}/v1/packaging-units?sku=${encodeURIComponent(sku)}`,
    });
  });

  it('stores a sku of exactly 255 characters', async () => {
    const sku = `${uniqueSku('LONG')}-`.padEnd(255, 'x');
    await createProduct(api, aProduct({ sku }));

    const response = await api.findBySku(sku);
    expect(response.status).toBe(200);
    expect(response.body.sku).toBe(sku);
  });

  it.each([
    ['sku', { sku: 'NUL\u0000SKU' }, '[0].sku'],
    ['description', { description: 'before\u0000after' }, '[0].description'],
    ['label', { label: '\u0000' }, '[0].label'],
  ])('answers a NUL character in %s with a 400 naming the field, never a 500', async (_field, fields, path) => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.create([aProduct(fields)]);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expect({ status: response.status, type: response.headers['content-type'] }).toEqual({
      status: 400,
      type: HAL_JSON_UTF8,
    });
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: [path], httpStatus: '400' });
  });

  it.each([
    [
      'a high surrogate alone in sku',
      (sku: string) => `[{"sku":"${sku}\\ud83d","baseUnit":{${PIECE_UNIT},"magnitude":1}}]`,
    ],
    [
      'a low surrogate alone in details',
      (sku: string) => `[{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":1},"details":{"k":"\\udc00"}}]`,
    ],
    [
      'a pair in the wrong order in label',
      (sku: string) => `[{"sku":"${sku}","label":"\\ude00\\ud83d","baseUnit":{${PIECE_UNIT},"magnitude":1}}]`,
    ],
  ])('answers %s, which is no character, with 400 and stores nothing', async (_case, body) => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.createRaw(body(uniqueSku('SURROGATE')));

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      exception: 'HttpMessageNotReadableException',
      message: 'Request body is not readable: a string holds a lone UTF-16 surrogate, which is no character',
    });
  });

  it('stores an escaped surrogate pair as the one character it is', async () => {
    const sku = `${uniqueSku('PAIR')}-\u{1F600}`;
    const escaped = sku.replace('\u{1F600}', '\\ud83d\\ude00');
    const response = await api.createRaw(`[{"sku":"${escaped}","baseUnit":{${PIECE_UNIT},"magnitude":1}}]`);

    expect(response.status).toBe(201);
    expect((await api.findBySku(sku)).body.sku).toBe(sku);
  });

  it('stores a NUL character inside details and reads it back', async () => {
    const details = { 'key\u0000': 'value\u0000' };
    const pKey = await createProduct(api, aProduct({ details }));

    const response = await api.findByPKey(pKey);
    expect(response.status).toBe(200);
    expect(response.body.details).toEqual(details);
  });

  it('keeps a magnitude of 15 integer and 6 fraction digits in a unit as well', async () => {
    const sku = uniqueSku('UNIT-BIG');
    const unit = `{"code":"PAL","quantity":{"unitType":["${UNITS_PKG}.PieceUnit","DOZ"],"magnitude":999999999999999.999999}}`;
    const pKey = expectCreatedOne(
      await api.createRaw(`[{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":1},"units":[${unit}]}]`),
    );

    const response = await api.findByPKey(pKey);
    expect(response.text).toContain(`"unitType":["${UNITS_PKG}.PieceUnit","DOZ"],"magnitude":999999999999999.999999}`);
    expect(response.body.units[0].quantity).toEqual(
      expect.objectContaining({ '@class': `${UNITS_PKG}.Piece`, unitType: aQuantity(1, 'DOZ').unitType }),
    );
  });
});
