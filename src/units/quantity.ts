import { LosslessNumber } from 'lossless-json';
import { Dec } from './decimal.js';
import {
  quantityClassName,
  unitByCode,
  unitClassName,
  type UnitCode,
  type UnitKind,
  type UnitOfMeasure,
} from './units.js';

/** D2: at most 15 digits before and 6 after the decimal point. */
export const MAX_INTEGER_DIGITS = 15;
export const MAX_FRACTION_DIGITS = 6;

const INTEGER_LIMIT = new Dec(10).pow(MAX_INTEGER_DIGITS);

/** Why `d` is not an acceptable magnitude (D2 limits), or undefined when it is. */
export function magnitudeProblem(d: Dec): string | undefined {
  if (d.isNaN()) return 'must be a number';
  if (!d.isFinite()) return 'must be a finite number';
  if (d.abs().gte(INTEGER_LIMIT)) {
    return `must have at most ${MAX_INTEGER_DIGITS} digits before the decimal point`;
  }
  if (d.decimalPlaces() > MAX_FRACTION_DIGITS) {
    return `must have at most ${MAX_FRACTION_DIGITS} decimal places`;
  }
  return undefined;
}

/**
 * The JSON value for a decimal in its shortest exact form. A plain number when it prints back to the very
 * same digits; otherwise (e.g. 123456789012345.123456, or a 1e21 that JS would print as `1e+21`) a
 * LosslessNumber holding the exact digits, which the project's JSON writer prints raw.
 */
export function toJsonNumber(d: Dec): number | LosslessNumber {
  if (!d.isFinite()) throw new RangeError(`${d.toString()} cannot be written as a JSON number`);
  const text = d.toFixed();
  const n = Number(text);
  return String(n) === text ? n : new LosslessNumber(text);
}

export class KindMismatchError extends Error {
  override readonly name = 'KindMismatchError';

  constructor(
    readonly left: UnitKind,
    readonly right: UnitKind,
  ) {
    super(`cannot combine a ${left} quantity with a ${right} quantity`);
  }
}

/** The D2 JSON shape; property order matters to clients and is fixed here. */
export interface QuantityJson {
  '@class': string;
  unitType: [string, UnitCode];
  magnitude: number | LosslessNumber;
}

export class Quantity {
  readonly magnitude: Dec;
  readonly unit: UnitOfMeasure;

  private constructor(magnitude: Dec, unit: UnitOfMeasure) {
    // Normalises -0 to 0 and values made by another Decimal constructor to the Dec configuration. A Dec is kept as
    // it is: Decimals never change, and a copy was one more per quantity of every view (issue 38 item 4).
    this.magnitude = magnitude.isZero() ? new Dec(0) : magnitude.constructor === Dec ? magnitude : new Dec(magnitude);
    this.unit = unit;
    Object.freeze(this);
  }

  /** Throws RangeError for an unknown unit code or a NaN/infinite magnitude; D2 limits are not checked here. */
  static of(magnitude: Dec | string | number, unitCode: string): Quantity {
    const unit = unitByCode(unitCode);
    if (unit === undefined) throw new RangeError(`unknown unit '${unitCode}'`);
    let d: Dec;
    try {
      d = new Dec(magnitude);
    } catch {
      throw new RangeError(`'${String(magnitude)}' is not a decimal number`);
    }
    if (!d.isFinite()) throw new RangeError(`magnitude must be finite, got ${d.toString()}`);
    return new Quantity(d, unit);
  }

  get kind(): UnitKind {
    return this.unit.kind;
  }

  get unitCode(): UnitCode {
    return this.unit.code;
  }

  inSmallestUnit(): Dec {
    return this.magnitude.times(this.unit.factor);
  }

  isSameKind(other: Quantity): boolean {
    return this.kind === other.kind;
  }

  compareTo(other: Quantity): -1 | 0 | 1 {
    this.assertSameKind(other);
    const c = this.inSmallestUnit().cmp(other.inSmallestUnit());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }

  /** Value equality across units of a kind (1 DOZ equals 12 PC); quantities of different kinds are never equal. */
  equals(other: Quantity): boolean {
    return this.isSameKind(other) && this.inSmallestUnit().eq(other.inSmallestUnit());
  }

  isZero(): boolean {
    return this.magnitude.isZero();
  }

  isPositive(): boolean {
    return this.magnitude.gt(0);
  }

  /** The sum, in the smaller of the two units (1 KG + 1 G = 1001 G). */
  plus(other: Quantity): Quantity {
    return this.combine(other, (a, b) => a.plus(b));
  }

  /** The difference, in the smaller of the two units (2 DOZ − 5 PC = 19 PC); may be zero or negative. */
  minus(other: Quantity): Quantity {
    return this.combine(other, (a, b) => a.minus(b));
  }

  /** The smaller operand; `this` when both are equal. */
  min(other: Quantity): Quantity {
    return this.compareTo(other) <= 0 ? this : other;
  }

  /** The larger operand; `this` when both are equal. */
  max(other: Quantity): Quantity {
    return this.compareTo(other) >= 0 ? this : other;
  }

  /** Exact conversion; undefined for another kind or when the result would need more than 6 decimal places. */
  to(unitCode: string): Quantity | undefined {
    const target = unitByCode(unitCode);
    if (target === undefined || target.kind !== this.kind) return undefined;
    const smallest = this.inSmallestUnit();
    const converted = smallest.div(target.factor);
    // The multiplication guards against a quotient that was rounded to the configured precision.
    if (converted.decimalPlaces() > MAX_FRACTION_DIGITS || !converted.times(target.factor).eq(smallest)) {
      return undefined;
    }
    return new Quantity(converted, target);
  }

  toString(): string {
    return `${this.magnitude.toFixed()} ${this.unit.code}`;
  }

  toJSON(): QuantityJson {
    return {
      '@class': quantityClassName(this.kind),
      unitType: [unitClassName(this.kind), this.unit.code],
      magnitude: toJsonNumber(this.magnitude),
    };
  }

  private assertSameKind(other: Quantity): void {
    if (!this.isSameKind(other)) throw new KindMismatchError(this.kind, other.kind);
  }

  private combine(other: Quantity, op: (a: Dec, b: Dec) => Dec): Quantity {
    this.assertSameKind(other);
    const unit = this.unit.factor.lte(other.unit.factor) ? this.unit : other.unit;
    // Exact: every factor of a kind is a whole multiple of every smaller one.
    return new Quantity(op(this.inSmallestUnit(), other.inSmallestUnit()).div(unit.factor), unit);
  }
}
