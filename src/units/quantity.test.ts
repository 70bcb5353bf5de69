import { isLosslessNumber, LosslessNumber, stringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { Dec } from './decimal.js';
import {
  KindMismatchError,
  magnitudeProblem,
  MAX_FRACTION_DIGITS,
  MAX_INTEGER_DIGITS,
  Quantity,
  toJsonNumber,
} from './quantity.js';

const q = Quantity.of;

describe('Quantity.of', () => {
  it('keeps the magnitude exactly as given, from a string, a number or a Dec', () => {
    expect(q('0.1', 'KG').magnitude.toFixed()).toBe('0.1');
    expect(q(0.1, 'KG').magnitude.toFixed()).toBe('0.1');
    expect(q(new Dec('123456789012345.123456'), 'G').magnitude.toFixed()).toBe('123456789012345.123456');
  });

  it('exposes the unit, its code and its kind', () => {
    const dozen = q(2, 'DOZ');
    expect(dozen.unitCode).toBe('DOZ');
    expect(dozen.unit.factor.toFixed()).toBe('12');
    expect(dozen.kind).toBe('Piece');
    expect(q(1, 'T').kind).toBe('Weight');
  });

  it.each(['XX', 'pc', '', 'PC '])('rejects the unknown unit %j with a RangeError', (code) => {
    expect(() => q(1, code)).toThrow(RangeError);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 'Infinity', 'abc', ''])(
    'rejects the magnitude %j with a RangeError',
    (magnitude) => {
      expect(() => q(magnitude, 'PC')).toThrow(RangeError);
    },
  );

  it('writes negative zero as 0', () => {
    expect(q(-0, 'PC').toString()).toBe('0 PC');
    expect(q('-0.000', 'PC').toJSON().magnitude).toBe(0);
  });

  it('cannot be altered', () => {
    const pieces = q(3, 'PC');
    expect(Object.isFrozen(pieces)).toBe(true);
    expect(() => Object.assign(pieces, { magnitude: new Dec(4) })).toThrow(TypeError);
  });
});

describe('Quantity arithmetic (D2)', () => {
  it('expresses 2 DOZ − 5 PC as 19 PC', () => {
    expect(q(2, 'DOZ').minus(q(5, 'PC')).toString()).toBe('19 PC');
  });

  it('expresses 1 DOZ + 1 DOZ as 2 DOZ', () => {
    expect(q(1, 'DOZ').plus(q(1, 'DOZ')).toString()).toBe('2 DOZ');
  });

  it('expresses 1 KG + 1 G as 1001 G, in either order', () => {
    expect(q(1, 'KG').plus(q(1, 'G')).toString()).toBe('1001 G');
    expect(q(1, 'G').plus(q(1, 'KG')).toString()).toBe('1001 G');
  });

  it('adds 0.1 KG and 0.2 KG to exactly 0.3 KG, written as 0.3 in JSON', () => {
    const sum = q(0.1, 'KG').plus(q(0.2, 'KG'));
    expect(sum.toString()).toBe('0.3 KG');
    expect(JSON.stringify(sum)).toContain('"magnitude":0.3}');
  });

  it('lets a difference become zero or negative', () => {
    expect(q(1, 'DOZ').minus(q(12, 'PC')).isZero()).toBe(true);
    expect(q(1, 'DOZ').minus(q(12, 'PC')).toString()).toBe('0 PC');
    expect(q(5, 'PC').minus(q(1, 'DOZ')).toString()).toBe('-7 PC');
  });

  it('refuses to combine pieces with weights', () => {
    expect(() => q(1, 'PC').plus(q(1, 'G'))).toThrow(KindMismatchError);
    expect(() => q(1, 'PC').minus(q(1, 'G'))).toThrow(KindMismatchError);
    expect(() => q(1, 'PC').compareTo(q(1, 'G'))).toThrow(KindMismatchError);
    expect(() => q(1, 'PC').min(q(1, 'G'))).toThrow(KindMismatchError);
    expect(() => q(1, 'KG').max(q(1, 'DOZ'))).toThrow(KindMismatchError);
  });
});

describe('Quantity comparison', () => {
  it('compares exactly across units of a kind', () => {
    expect(q(1, 'DOZ').compareTo(q(11, 'PC'))).toBe(1);
    expect(q(1, 'DOZ').compareTo(q(12, 'PC'))).toBe(0);
    expect(q(1, 'DOZ').compareTo(q(13, 'PC'))).toBe(-1);
    expect(q('0.000001', 'T').compareTo(q(1, 'G'))).toBe(0);
  });

  it('treats 1 DOZ and 12 PC as equal but never a Piece and a Weight', () => {
    expect(q(1, 'DOZ').equals(q(12, 'PC'))).toBe(true);
    expect(q(1, 'DOZ').equals(q(13, 'PC'))).toBe(false);
    expect(q(1, 'PC').equals(q(1, 'MG'))).toBe(false);
    expect(q(1, 'PC').isSameKind(q(1, 'DOZ'))).toBe(true);
    expect(q(1, 'PC').isSameKind(q(1, 'MG'))).toBe(false);
  });

  it('returns the operands themselves from min and max, preferring the receiver on a tie', () => {
    const dozen = q(1, 'DOZ');
    const pieces = q(12, 'PC');
    const few = q(5, 'PC');
    expect(dozen.min(few)).toBe(few);
    expect(dozen.max(few)).toBe(dozen);
    expect(dozen.min(pieces)).toBe(dozen);
    expect(pieces.max(dozen)).toBe(pieces);
  });

  it('tells zero and positive quantities apart', () => {
    expect(q(0, 'PC').isZero()).toBe(true);
    expect(q(0, 'PC').isPositive()).toBe(false);
    expect(q('0.000001', 'PC').isPositive()).toBe(true);
    expect(q(-1, 'PC').isPositive()).toBe(false);
    expect(q(-1, 'PC').isZero()).toBe(false);
  });
});

describe('Quantity.to', () => {
  it.each([
    [6, 'PC', 'DOZ', '0.5 DOZ'],
    [3, 'PC', 'DOZ', '0.25 DOZ'],
    [2, 'DOZ', 'PC', '24 PC'],
    [1, 'MG', 'G', '0.001 G'],
    [1, 'G', 'T', '0.000001 T'],
    [1.5, 'T', 'MG', '1500000000 MG'],
  ])('converts %s %s to %s exactly as %s', (magnitude, from, to, expected) => {
    expect(q(magnitude, from).to(to)?.toString()).toBe(expected);
  });

  it.each([
    [5, 'PC', 'DOZ'],
    [1, 'PC', 'DOZ'],
    [1, 'MG', 'T'],
    [1, 'PC', 'G'],
    [1, 'KG', 'PC'],
    [1, 'PC', 'XX'],
  ])('has no exact %s %s in %s', (magnitude, from, to) => {
    expect(q(magnitude, from).to(to)).toBeUndefined();
  });
});

describe('Quantity text and JSON (D2)', () => {
  it('writes the magnitude in its shortest exact form', () => {
    expect(q(30, 'PC').toString()).toBe('30 PC');
    expect(q('0.500', 'KG').toString()).toBe('0.5 KG');
    expect(q('1e-6', 'KG').toString()).toBe('0.000001 KG');
    expect(q('1e21', 'MG').toString()).toBe('1000000000000000000000 MG');
  });

  it('writes the D2 shape with its properties in order', () => {
    expect(JSON.stringify(q(3, 'PC'))).toBe(
      '{"@class":"org.openwms.core.units.api.Piece","unitType":["org.openwms.core.units.api.PieceUnit","PC"],"magnitude":3}',
    );
    expect(JSON.stringify(q('0.100', 'G'))).toBe(
      '{"@class":"org.openwms.core.units.api.Weight","unitType":["org.openwms.core.units.api.WeightUnit","G"],"magnitude":0.1}',
    );
    expect(Object.keys(q(1, 'DOZ').toJSON())).toEqual(['@class', 'unitType', 'magnitude']);
  });

  it('writes a magnitude a JS number cannot hold as a raw LosslessNumber', () => {
    expect(stringify(q('123456789012345.123456', 'G'))).toBe(
      '{"@class":"org.openwms.core.units.api.Weight","unitType":["org.openwms.core.units.api.WeightUnit","G"],"magnitude":123456789012345.123456}',
    );
  });
});

describe('toJsonNumber', () => {
  it('returns a LosslessNumber for 123456789012345.123456', () => {
    const n = toJsonNumber(new Dec('123456789012345.123456'));
    expect(n).toBeInstanceOf(LosslessNumber);
    expect((n as LosslessNumber).value).toBe('123456789012345.123456');
  });

  it('returns a plain number when it prints back to the same digits', () => {
    expect(toJsonNumber(new Dec('0.3'))).toBe(0.3);
    expect(toJsonNumber(new Dec('-19'))).toBe(-19);
    expect(toJsonNumber(new Dec('999999999999999'))).toBe(999999999999999);
  });

  it('never yields exponent notation', () => {
    const tiny = toJsonNumber(new Dec('0.0000001'));
    const huge = toJsonNumber(new Dec('1e21'));
    expect(isLosslessNumber(tiny) && tiny.value).toBe('0.0000001');
    expect(isLosslessNumber(huge) && huge.value).toBe('1000000000000000000000');
  });

  it('refuses non-finite values, which JSON cannot carry', () => {
    expect(() => toJsonNumber(new Dec(Number.NaN))).toThrow(RangeError);
    expect(() => toJsonNumber(new Dec(Number.POSITIVE_INFINITY))).toThrow(RangeError);
  });
});

describe('magnitudeProblem (D2 limits)', () => {
  it('allows 15 digits before and 6 after the decimal point', () => {
    expect(MAX_INTEGER_DIGITS).toBe(15);
    expect(MAX_FRACTION_DIGITS).toBe(6);
    expect(magnitudeProblem(new Dec('999999999999999.999999'))).toBeUndefined();
    expect(magnitudeProblem(new Dec('-999999999999999.999999'))).toBeUndefined();
    expect(magnitudeProblem(new Dec(0))).toBeUndefined();
  });

  it.each([
    ['1000000000000000', 'must have at most 15 digits before the decimal point'],
    ['-1e30', 'must have at most 15 digits before the decimal point'],
    ['1e309', 'must have at most 15 digits before the decimal point'],
    ['0.0000001', 'must have at most 6 decimal places'],
    ['1.1234567', 'must have at most 6 decimal places'],
    ['Infinity', 'must be a finite number'],
    ['NaN', 'must be a number'],
  ])('rejects %s: %s', (text, reason) => {
    expect(magnitudeProblem(new Dec(text))).toBe(reason);
  });
});
