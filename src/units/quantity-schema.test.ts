import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { LosslessNumber, parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { z } from '../openapi/zod.js';
import { Quantity } from './quantity.js';
import { positiveQuantitySchema, quantitySchema } from './quantity-schema.js';

const PIECE = 'org.openwms.core.units.api.Piece';
const PIECE_UNIT = 'org.openwms.core.units.api.PieceUnit';
const WEIGHT = 'org.openwms.core.units.api.Weight';
const WEIGHT_UNIT = 'org.openwms.core.units.api.WeightUnit';

const pieces = (magnitude: unknown, code = 'PC'): Record<string, unknown> => ({
  '@class': PIECE,
  unitType: [PIECE_UNIT, code],
  magnitude,
});

/** Every issue as `path: message`, the form D6 puts into a validation error. */
function problems(schema: z.ZodType, input: unknown): string[] {
  const result = schema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('quantitySchema accepts (D2)', () => {
  it('parses the D2 example into a Quantity', () => {
    const q = quantitySchema.parse(
      parse(
        '{"@class":"org.openwms.core.units.api.Piece","unitType":["org.openwms.core.units.api.PieceUnit","PC"],"magnitude":3}',
      ),
    );
    expect(q).toBeInstanceOf(Quantity);
    expect(q.toString()).toBe('3 PC');
  });

  it('accepts a quantity without @class', () => {
    expect(quantitySchema.parse({ unitType: [WEIGHT_UNIT, 'KG'], magnitude: 0.5 }).toString()).toBe('0.5 KG');
  });

  it('keeps a JS number exactly as written: 0.1 stays 0.1', () => {
    expect(quantitySchema.parse(pieces(0.1)).magnitude.toFixed()).toBe('0.1');
  });

  it('keeps every digit of a LosslessNumber', () => {
    const q = quantitySchema.parse(pieces(new LosslessNumber('123456789012345.123456')));
    expect(q.magnitude.toFixed()).toBe('123456789012345.123456');
  });

  it('accepts zero and negative magnitudes', () => {
    expect(quantitySchema.parse(pieces(0)).isZero()).toBe(true);
    expect(quantitySchema.parse(pieces(-1)).toString()).toBe('-1 PC');
  });

  it('accepts the limits: 15 digits before and 6 after the decimal point', () => {
    const q = quantitySchema.parse(pieces(new LosslessNumber('999999999999999.999999')));
    expect(q.magnitude.toFixed()).toBe('999999999999999.999999');
    expect(quantitySchema.parse(pieces(0.000001)).magnitude.toFixed()).toBe('0.000001');
  });

  it('ignores unknown fields', () => {
    const q = quantitySchema.parse({ ...pieces(2, 'DOZ'), note: 'x' });
    expect(q.toString()).toBe('2 DOZ');
  });

  it('accepts weights with the Weight classes', () => {
    const q = quantitySchema.parse({ '@class': WEIGHT, unitType: [WEIGHT_UNIT, 'G'], magnitude: 250 });
    expect(q.kind).toBe('Weight');
  });
});

describe('quantitySchema rejects, naming the field', () => {
  it.each([
    ['a missing magnitude', { '@class': PIECE, unitType: [PIECE_UNIT, 'PC'] }, 'magnitude: required'],
    ['the string "3"', pieces('3'), 'magnitude: must be a number'],
    ['a boolean', pieces(true), 'magnitude: must be a number'],
    ['null', pieces(null), 'magnitude: must be a number'],
    ['an array', pieces([3]), 'magnitude: must be a number'],
    ['NaN', pieces(Number.NaN), 'magnitude: must be a finite number'],
    ['Infinity', pieces(Number.POSITIVE_INFINITY), 'magnitude: must be a finite number'],
    [
      'LosslessNumber 1e309',
      pieces(new LosslessNumber('1e309')),
      'magnitude: must have at most 15 digits before the decimal point',
    ],
    [
      'LosslessNumber 1e30',
      pieces(new LosslessNumber('1e30')),
      'magnitude: must have at most 15 digits before the decimal point',
    ],
    [
      'a 16-digit integer',
      pieces(new LosslessNumber('1000000000000000')),
      'magnitude: must have at most 15 digits before the decimal point',
    ],
    [
      'an exponent beyond what decimal.js can hold',
      pieces(new LosslessNumber('1e99999999999999999')),
      'magnitude: must have at most 15 digits before the decimal point',
    ],
    ['0.0000001', pieces(0.0000001), 'magnitude: must have at most 6 decimal places'],
    [
      'a tiny exponent that decimal.js would round to zero',
      pieces(new LosslessNumber('1e-99999999999999999')),
      'magnitude: must have at most 6 decimal places',
    ],
    ['an unknown unit code', pieces(3, 'XX'), "unitType: unknown unit 'XX' (known: PC, DOZ, MG, G, KG, T)"],
    ['a lower-case unit code', pieces(3, 'pc'), "unitType: unknown unit 'pc' (known: PC, DOZ, MG, G, KG, T)"],
    [
      'a @class of the other kind',
      { ...pieces(3), '@class': WEIGHT },
      `@class: '${WEIGHT}' does not match unit 'PC', expected '${PIECE}'`,
    ],
    [
      'a unit type class of the other kind',
      { '@class': PIECE, unitType: [WEIGHT_UNIT, 'PC'], magnitude: 3 },
      `unitType: '${WEIGHT_UNIT}' does not match unit 'PC', expected '${PIECE_UNIT}'`,
    ],
    ['a missing unitType', { '@class': PIECE, magnitude: 3 }, 'unitType: required'],
    [
      'a unitType of one element',
      { unitType: ['PC'], magnitude: 3 },
      'unitType: must be [unit type class name, unit code]',
    ],
    [
      'a unitType that is a string',
      { unitType: 'PC', magnitude: 3 },
      'unitType: must be [unit type class name, unit code]',
    ],
    ['a unit code that is a number', { unitType: [PIECE_UNIT, 1], magnitude: 3 }, 'unitType.1: must be a string'],
    ['a @class that is a number', { ...pieces(3), '@class': 1 }, '@class: must be a string'],
    ['a body that is not an object', '3 PC', ': must be an object'],
    ['nothing', undefined, ': required'],
  ])('rejects %s', (_, input, problem) => {
    expect(problems(quantitySchema, input)).toEqual([problem]);
  });

  it('names every bad field at once', () => {
    expect(problems(quantitySchema, { '@class': WEIGHT, unitType: ['x', 'PC'], magnitude: '3' }).sort()).toEqual([
      `@class: '${WEIGHT}' does not match unit 'PC', expected '${PIECE}'`,
      'magnitude: must be a number',
      `unitType: 'x' does not match unit 'PC', expected '${PIECE_UNIT}'`,
    ]);
  });

  it('reports paths relative to the enclosing schema when nested', () => {
    const body = z.array(z.object({ baseUnit: positiveQuantitySchema }));
    expect(problems(body, [{ baseUnit: pieces(1) }, { baseUnit: pieces(-1) }])).toEqual([
      '1.baseUnit.magnitude: must be greater than 0',
    ]);
    expect(problems(body, [{}])).toEqual(['0.baseUnit: required']);
  });
});

describe('positiveQuantitySchema', () => {
  it('accepts the smallest positive magnitude', () => {
    expect(positiveQuantitySchema.parse(pieces(0.000001)).isPositive()).toBe(true);
  });

  it.each([0, -1, -0.000001])('rejects %s with "must be greater than 0"', (magnitude) => {
    expect(problems(positiveQuantitySchema, pieces(magnitude))).toEqual(['magnitude: must be greater than 0']);
  });

  it('reports a limit problem rather than the sign when both apply', () => {
    expect(problems(positiveQuantitySchema, pieces(new LosslessNumber('-1e30')))).toEqual([
      'magnitude: must have at most 15 digits before the decimal point',
    ]);
  });
});

describe('OpenAPI description', () => {
  const registry = new OpenAPIRegistry();
  registry.register('Quantity', quantitySchema);
  registry.register('PositiveQuantity', positiveQuantitySchema);
  const schemas = new OpenApiGeneratorV31(registry.definitions).generateComponents().components?.schemas ?? {};

  it('documents the request shape with a number magnitude and an example', () => {
    expect(schemas['Quantity']).toMatchObject({
      type: 'object',
      required: ['unitType', 'magnitude'],
      properties: { '@class': { type: 'string' }, magnitude: { type: 'number' } },
      example: { '@class': PIECE, unitType: [PIECE_UNIT, 'PC'], magnitude: 3 },
    });
  });

  it('documents that a positive quantity excludes zero', () => {
    expect(schemas['PositiveQuantity']).toMatchObject({
      properties: { magnitude: { type: 'number', exclusiveMinimum: 0 } },
    });
  });
});
