import fc from 'fast-check';
import { parse, stringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { Dec } from './decimal.js';
import { KindMismatchError, magnitudeProblem, Quantity } from './quantity.js';
import { quantitySchema } from './quantity-schema.js';
import { UNITS, type UnitKind, type UnitOfMeasure } from './units.js';

// Oracle independent of decimal.js: a magnitude is `micros / 10^6` and factors are whole numbers,
// so a quantity in the smallest unit, times 10^6, is the exact BigInt `micros * factor`.
const MICROS_LIMIT = 10n ** 21n - 1n;

interface Sample {
  readonly micros: bigint;
  readonly unit: UnitOfMeasure;
  readonly quantity: Quantity;
}

const factorOf = (unit: UnitOfMeasure): bigint => BigInt(unit.factor.toFixed());
const scaled = (s: Sample): bigint => s.micros * factorOf(s.unit);

function sampleOf(unitArb: fc.Arbitrary<UnitOfMeasure>): fc.Arbitrary<Sample> {
  const micros = fc.oneof(
    fc.bigInt({ min: -MICROS_LIMIT, max: MICROS_LIMIT }),
    fc.integer({ min: -100, max: 100 }).map((n) => BigInt(n) * 1_000_000n),
  );
  return fc.tuple(micros, unitArb).map(([m, unit]) => ({
    micros: m,
    unit,
    quantity: Quantity.of(new Dec(m.toString()).div(1_000_000), unit.code),
  }));
}

const anyUnit = fc.constantFrom(...UNITS);
const unitOfKind = (kind: UnitKind): fc.Arbitrary<UnitOfMeasure> =>
  fc.constantFrom(...UNITS.filter((u) => u.kind === kind));
const kind = fc.constantFrom<UnitKind>('Piece', 'Weight');
const sample = sampleOf(anyUnit);
const pair = kind.chain((k) => fc.tuple(sampleOf(unitOfKind(k)), sampleOf(unitOfKind(k))));
const triple = kind.chain((k) => fc.tuple(sampleOf(unitOfKind(k)), sampleOf(unitOfKind(k)), sampleOf(unitOfKind(k))));
const sampleAndTarget = kind.chain((k) => fc.tuple(sampleOf(unitOfKind(k)), unitOfKind(k)));

const sign = (n: bigint): -1 | 0 | 1 => (n < 0n ? -1 : n > 0n ? 1 : 0);
const SHORTEST_DECIMAL = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

describe('Quantity properties', () => {
  it('converts to another unit exactly when the result fits in 6 decimal places, and back unchanged', () => {
    fc.assert(
      fc.property(sampleAndTarget, ([s, target]) => {
        const converted = s.quantity.to(target.code);
        expect(converted !== undefined).toBe(scaled(s) % factorOf(target) === 0n);
        if (converted === undefined) return;
        expect(converted.unitCode).toBe(target.code);
        expect(converted.equals(s.quantity)).toBe(true);
        const back = converted.to(s.unit.code);
        expect(back?.unitCode).toBe(s.unit.code);
        expect(back?.magnitude.eq(s.quantity.magnitude)).toBe(true);
      }),
    );
  });

  it('never converts between kinds', () => {
    fc.assert(
      fc.property(sample, anyUnit, (s, target) => {
        fc.pre(target.kind !== s.unit.kind);
        expect(s.quantity.to(target.code)).toBeUndefined();
      }),
    );
  });

  it('adds and subtracts exactly, in the smaller unit', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const smaller = factorOf(a.unit) <= factorOf(b.unit) ? a.unit : b.unit;
        for (const [result, expected] of [
          [a.quantity.plus(b.quantity), scaled(a) + scaled(b)],
          [a.quantity.minus(b.quantity), scaled(a) - scaled(b)],
        ] as const) {
          expect(result.unitCode).toBe(smaller.code);
          expect(result.inSmallestUnit().times(1_000_000).toFixed()).toBe(expected.toString());
        }
      }),
    );
  });

  it('gives back a after adding and then subtracting b', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const result = a.quantity.plus(b.quantity).minus(b.quantity);
        expect(result.equals(a.quantity)).toBe(true);
        expect(result.compareTo(a.quantity)).toBe(0);
      }),
    );
  });

  it('adds commutatively, with the same unit either way', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const ab = a.quantity.plus(b.quantity);
        const ba = b.quantity.plus(a.quantity);
        expect(ab.unitCode).toBe(ba.unitCode);
        expect(ab.magnitude.eq(ba.magnitude)).toBe(true);
      }),
    );
  });

  it('orders quantities by their exact amount in the smallest unit', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const c = a.quantity.compareTo(b.quantity);
        expect(c).toBe(sign(scaled(a) - scaled(b)));
        expect(c).toBe(a.quantity.inSmallestUnit().cmp(b.quantity.inSmallestUnit()));
        expect(b.quantity.compareTo(a.quantity)).toBe(c === 0 ? 0 : -c);
        expect(a.quantity.equals(b.quantity)).toBe(c === 0);
      }),
    );
  });

  it('orders transitively', () => {
    fc.assert(
      fc.property(triple, ([a, b, c]) => {
        const [x, y, z] = [a, b, c].map((s) => s.quantity).sort((p, q) => p.compareTo(q));
        expect(x!.compareTo(y!)).toBeLessThanOrEqual(0);
        expect(y!.compareTo(z!)).toBeLessThanOrEqual(0);
        expect(x!.compareTo(z!)).toBeLessThanOrEqual(0);
      }),
    );
  });

  it('picks min and max among the operands, min never above max', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const min = a.quantity.min(b.quantity);
        const max = a.quantity.max(b.quantity);
        expect([a.quantity, b.quantity]).toContain(min);
        expect([a.quantity, b.quantity]).toContain(max);
        expect(min.compareTo(max)).toBeLessThanOrEqual(0);
        expect(min.compareTo(a.quantity)).toBeLessThanOrEqual(0);
        expect(max.compareTo(b.quantity)).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('refuses to combine quantities of different kinds', () => {
    fc.assert(
      fc.property(sample, sample, (a, b) => {
        fc.pre(a.unit.kind !== b.unit.kind);
        expect(() => a.quantity.plus(b.quantity)).toThrow(KindMismatchError);
        expect(() => a.quantity.compareTo(b.quantity)).toThrow(KindMismatchError);
        expect(a.quantity.equals(b.quantity)).toBe(false);
      }),
    );
  });

  it('writes the magnitude in its shortest exact decimal form, in text and JSON', () => {
    fc.assert(
      fc.property(sample, (s) => {
        const exact = new Dec(s.micros.toString()).div(1_000_000);
        const [digits, code] = s.quantity.toString().split(' ');
        expect(code).toBe(s.unit.code);
        expect(digits).toMatch(SHORTEST_DECIMAL);
        expect(new Dec(digits!).eq(exact)).toBe(true);
        const json = stringify(s.quantity) ?? '';
        expect(json.endsWith(`"magnitude":${digits}}`)).toBe(true);
      }),
    );
  });

  it('reads its own JSON back as the same quantity in the same unit', () => {
    fc.assert(
      fc.property(sample, (s) => {
        expect(magnitudeProblem(s.quantity.magnitude)).toBeUndefined();
        const parsed = quantitySchema.parse(parse(stringify(s.quantity) ?? ''));
        expect(parsed.unitCode).toBe(s.unit.code);
        expect(parsed.magnitude.eq(s.quantity.magnitude)).toBe(true);
        if (typeof s.quantity.toJSON().magnitude === 'number') {
          const viaNumbers = quantitySchema.parse(JSON.parse(JSON.stringify(s.quantity)));
          expect(viaNumbers.magnitude.eq(s.quantity.magnitude)).toBe(true);
        }
      }),
    );
  });
});
