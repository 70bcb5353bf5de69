import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { aProduct, aProductUnit, aQuantity, type Json, UNITS_PKG } from '../support/builders.js';
import { bearer } from '../support/tokens.js';
import { productApi, rowCounts } from './product-api.js';

const ctx = useTestApp();
const api = productApi(ctx);

function nested(levels: number): Json {
  let value: Json = { leaf: true };
  for (let level = 1; level < levels; level++) value = { level: value };
  return value;
}

const WEIGHT_UNIT = `${UNITS_PKG}.WeightUnit`;
const PIECE_UNIT = `${UNITS_PKG}.PieceUnit`;

describe('POST /v1/products validation: all or nothing (D6, D10)', () => {
  it('names every invalid item with its index path, in one 400, and stores none of the ten Products', async () => {
    const products: Json[] = Array.from({ length: 10 }, () => aProduct());
    products[3] = aProduct({ baseUnit: undefined });
    products[7] = aProduct({ sku: undefined });
    const before = await rowCounts(ctx.db.pool);

    const response = await api.create(products);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [
      ['[3].baseUnit', 'required'],
      ['[7].sku', 'required'],
    ]);
  });

  it('names every invalid field of every item, in item and field order, and stores nothing', async () => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.create([
      aProduct(),
      aProduct({ sku: 1, baseUnit: aQuantity('1') }),
      aProduct(),
      aProduct({ sku: ' ', baseUnit: aQuantity(-1), description: {}, overbookingAllowed: 'true' }),
    ]);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [
      ['[1].sku', 'must be of type string'],
      ['[1].baseUnit.magnitude', 'must be a number'],
      ['[3].sku', 'must not be blank'],
      ['[3].baseUnit.magnitude', 'must be greater than 0'],
      ['[3].description', 'must be of type string'],
      ['[3].overbookingAllowed', 'must be of type boolean'],
    ]);
  });

  it('names fields without an index when one Product was sent as a plain object', async () => {
    const response = await api.create(aProduct({ sku: '', units: [aProductUnit({ quantity: aQuantity(0, 'DOZ') })] }));

    expectValidationError(response, [
      ['sku', 'must not be blank'],
      ['units[0].quantity.magnitude', 'must be greater than 0'],
    ]);
  });

  it.each<[string, Json, string, string]>([
    ['a missing sku', { sku: undefined }, '[0].sku', 'required'],
    ['a missing baseUnit', { baseUnit: undefined }, '[0].baseUnit', 'required'],
    ['a sku that is a number', { sku: 4711 }, '[0].sku', 'must be of type string'],
    ['a sku that is an array', { sku: ['A'] }, '[0].sku', 'must be of type string'],
    ['a blank sku', { sku: '   ' }, '[0].sku', 'must not be blank'],
    ['an empty sku', { sku: '' }, '[0].sku', 'must not be blank'],
    ['a 300-character sku', { sku: 'S'.repeat(300) }, '[0].sku', 'Too big: expected string to have <=255 characters'],
    ['the magnitude "1" as a string', { baseUnit: aQuantity('1') }, '[0].baseUnit.magnitude', 'must be a number'],
    ['the magnitude "NaN"', { baseUnit: aQuantity('NaN') }, '[0].baseUnit.magnitude', 'must be a number'],
    ['a missing magnitude', { baseUnit: aQuantity(undefined) }, '[0].baseUnit.magnitude', 'required'],
    ['overbookingAllowed "true"', { overbookingAllowed: 'true' }, '[0].overbookingAllowed', 'must be of type boolean'],
    ['an object as description', { description: { text: 'x' } }, '[0].description', 'must be of type string'],
    ['a number as label', { label: 5 }, '[0].label', 'must be of type string'],
    [
      'an unknown availabilityState',
      { availabilityState: 'BROKEN' },
      '[0].availabilityState',
      'Invalid option: expected one of "LOCKED"|"QC_LOCKED"|"AVAILABLE"',
    ],
    ['an unknown stockZone', { stockZone: 'D' }, '[0].stockZone', 'Invalid option: expected one of "A"|"B"|"C"'],
    ['units that are not an array', { units: {} }, '[0].units', 'must be of type array'],
    ['a unit without quantity', { units: [{ code: 'X' }] }, '[0].units[0].quantity', 'required'],
    ['details that are an array', { details: [] }, '[0].details', 'must be an object'],
    [
      'details nested 20 levels deep',
      { details: nested(20) },
      '[0].details',
      'must not be nested deeper than 16 levels',
    ],
    [
      'a unit whose details are nested 20 levels deep',
      { units: [aProductUnit({ details: nested(20) })] },
      '[0].units[0].details',
      'must not be nested deeper than 16 levels',
    ],
    ['a dimension value as a string', { dimension: { height: '1' } }, '[0].dimension.height', 'must be of type number'],
    [
      'a stacking rule count as a string',
      { stackingRules: [{ noProducts: '2', allowedProduct: { sku: 'X' } }] },
      '[0].stackingRules[0].noProducts',
      'must be of type number',
    ],
    [
      'an unknown unit code',
      { baseUnit: aQuantity(1, 'PCS') },
      '[0].baseUnit.unitType',
      "unknown unit 'PCS' (known: PC, DOZ, MG, G, KG, T)",
    ],
    [
      'a lower-case unit code',
      { baseUnit: aQuantity(1, 'pc') },
      '[0].baseUnit.unitType',
      "unknown unit 'pc' (known: PC, DOZ, MG, G, KG, T)",
    ],
    [
      'a unitType that is not a pair',
      { baseUnit: { unitType: 'PC', magnitude: 1 } },
      '[0].baseUnit.unitType',
      'must be [unit type class name, unit code]',
    ],
    [
      'a @class that does not match the unit',
      { baseUnit: { ...aQuantity(1, 'PC'), '@class': `${UNITS_PKG}.Weight` } },
      '[0].baseUnit.@class',
      `'${UNITS_PKG}.Weight' does not match unit 'PC', expected '${UNITS_PKG}.Piece'`,
    ],
    [
      'a unit type class that does not match the unit',
      { baseUnit: { unitType: [WEIGHT_UNIT, 'PC'], magnitude: 1 } },
      '[0].baseUnit.unitType',
      `'${WEIGHT_UNIT}' does not match unit 'PC', expected '${PIECE_UNIT}'`,
    ],
    [
      'a Weight unit in the units of a Piece Product',
      { units: [aProductUnit({ quantity: aQuantity(500, 'G') })] },
      '[0].units[0].quantity',
      'must be a Piece quantity like the baseUnit',
    ],
    [
      'a Piece unit in the units of a Weight Product',
      { baseUnit: aQuantity(1, 'KG'), units: [aProductUnit({ quantity: aQuantity(1, 'DOZ') })] },
      '[0].units[0].quantity',
      'must be a Weight quantity like the baseUnit',
    ],
  ])('answers %s with a 400 naming that field and stores nothing', async (_what, fields, path, message) => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.create([aProduct(fields)]);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [[path, message]]);
  });

  it.each([
    ['negative', '-1', 'must be greater than 0'],
    ['zero', '0', 'must be greater than 0'],
    ['1e309', '1e309', 'must have at most 15 digits before the decimal point'],
    ['1e30', '1e30', 'must have at most 15 digits before the decimal point'],
    ['16 integer digits', '1234567890123456', 'must have at most 15 digits before the decimal point'],
    ['0.0000001', '0.0000001', 'must have at most 6 decimal places'],
    ['"NaN"', '"NaN"', 'must be a number'],
  ])('answers a %s magnitude with a 400 naming it and stores nothing', async (_what, magnitude, message) => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.createRaw(
      `[{"sku":"MAG","baseUnit":{"unitType":["${PIECE_UNIT}","PC"],"magnitude":${magnitude}}}]`,
    );

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [['[0].baseUnit.magnitude', message]]);
  });

  it('answers an empty array with a 400 naming the body', async () => {
    const response = await api.create([]);

    expectValidationError(response, [['body', 'must contain at least one Product']]);
  });

  it.each([
    ['a string', '"A-1"'],
    ['a number', '42'],
    ['a number too long for a double', '12345678901234567890'],
    ['null', 'null'],
    ['a boolean', 'true'],
  ])('answers a body that is %s with a 400 naming the body and stores nothing', async (_what, json) => {
    const before = await rowCounts(ctx.db.pool);
    const response = await api.createRaw(json);

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [['body', 'must be of type array']]);
  });

  it.each([
    ['no body at all', undefined],
    ['a blank body', ' \n '],
  ])('answers %s with a 400 naming the body as required and stores nothing', async (_what, json) => {
    const before = await rowCounts(ctx.db.pool);
    const post = request(ctx.app).post('/v1/products').set('Authorization', bearer());
    const response = await (json === undefined ? post : post.set('Content-Type', 'application/json').send(json));

    expect(await rowCounts(ctx.db.pool)).toEqual(before);
    expectValidationError(response, [['body', 'required']]);
  });

  it('answers an array holding a non-object with a 400 naming that element', async () => {
    const response = await api.create([aProduct(), 'A-2', null]);

    expectValidationError(response, [
      ['[1]', 'must be of type object'],
      ['[2]', 'must be of type object'],
    ]);
  });
});
