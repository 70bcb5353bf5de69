import { isLosslessNumber, type LosslessNumber } from 'lossless-json';
import { z } from '../openapi/zod.js';
import { Dec } from './decimal.js';
import { magnitudeProblem, MAX_FRACTION_DIGITS, MAX_INTEGER_DIGITS, Quantity } from './quantity.js';
import { quantityClassName, UNIT_CODES, unitByCode, unitClassName, UNITS_PKG } from './units.js';

/** What the project's JSON parser yields for a JSON number: a LosslessNumber when a JS number would lose digits. */
type JsonNumber = number | LosslessNumber;

type ErrorMap = (issue: { input?: unknown }) => string;

function typeError(expected: string): ErrorMap {
  return (issue) => (issue.input === undefined ? 'required' : `must be ${expected}`);
}

const INTEGER_DIGITS_PROBLEM = `must have at most ${MAX_INTEGER_DIGITS} digits before the decimal point`;
const FRACTION_DIGITS_PROBLEM = `must have at most ${MAX_FRACTION_DIGITS} decimal places`;

/** The exact decimal of a JSON number, or why there is none. */
function exactDecimal(value: JsonNumber): Dec | string {
  if (typeof value === 'number') {
    // String(n) is the shortest text that reads back as n, so 0.1 stays 0.1.
    return Number.isFinite(value) ? new Dec(String(value)) : 'must be a finite number';
  }
  let d: Dec;
  try {
    d = new Dec(value.value);
  } catch {
    return 'must be a number';
  }
  // decimal.js turns exponents beyond about ±9e15 into Infinity or 0; name the D2 limit the text breaks.
  if (!d.isFinite()) return INTEGER_DIGITS_PROBLEM;
  if (d.isZero() && /[1-9]/.test(value.value.split(/e/i)[0] ?? '')) return FRACTION_DIGITS_PROBLEM;
  return d;
}

function acceptableMagnitude(value: JsonNumber, positive: boolean): Dec | string {
  const d = exactDecimal(value);
  if (typeof d === 'string') return d;
  const problem = magnitudeProblem(d) ?? (positive && !d.gt(0) ? 'must be greater than 0' : undefined);
  return problem ?? d;
}

function magnitudeSchema(positive: boolean) {
  // abort: false keeps a wrong magnitude type from silencing the cross-field `@class` check below.
  return z
    .custom<JsonNumber>((v) => typeof v === 'number' || isLosslessNumber(v), {
      error: typeError('a number'),
      abort: false,
    })
    .openapi({
      type: 'number',
      ...(positive ? { exclusiveMinimum: 0 } : {}),
      description: `At most ${MAX_INTEGER_DIGITS} digits before and ${MAX_FRACTION_DIGITS} after the decimal point.`,
    })
    .transform((value, ctx): Dec => {
      const result = acceptableMagnitude(value, positive);
      if (typeof result === 'string') {
        ctx.addIssue({ code: 'custom', message: result, input: value });
        return z.NEVER;
      }
      return result;
    });
}

const unitTypeSchema = z
  .tuple([z.string({ error: typeError('a string') }), z.string({ error: typeError('a string') })], {
    error: typeError('[unit type class name, unit code]'),
  })
  .openapi({ example: [unitClassName('Piece'), 'PC'] })
  .superRefine(([className, code], ctx) => {
    const unit = unitByCode(code);
    if (unit === undefined) {
      ctx.addIssue({ code: 'custom', message: `unknown unit '${code}' (known: ${UNIT_CODES.join(', ')})` });
      return;
    }
    const expected = unitClassName(unit.kind);
    if (className !== expected) {
      ctx.addIssue({ code: 'custom', message: `'${className}' does not match unit '${code}', expected '${expected}'` });
    }
  });

/**
 * D2: `@class` may be omitted, but when given it must name the kind of the unit in `unitType`.
 * It runs even when other fields failed (`when`), so one response names every bad field; the value may
 * therefore be only partly parsed and is read defensively.
 */
function checkClassMatchesUnit(value: unknown, ctx: z.RefinementCtx): void {
  if (typeof value !== 'object' || value === null) return;
  const { '@class': className, unitType } = value as { '@class'?: unknown; unitType?: unknown };
  if (typeof className !== 'string' || !Array.isArray(unitType) || typeof unitType[1] !== 'string') return;
  const unit = unitByCode(unitType[1]);
  if (unit === undefined) return;
  const expected = quantityClassName(unit.kind);
  if (className !== expected) {
    ctx.addIssue({
      code: 'custom',
      path: ['@class'],
      message: `'${className}' does not match unit '${unit.code}', expected '${expected}'`,
    });
  }
}

function quantityInputSchema(positive: boolean) {
  return z
    .object(
      {
        '@class': z.string({ error: typeError('a string') }).optional(),
        unitType: unitTypeSchema,
        magnitude: magnitudeSchema(positive),
      },
      { error: typeError('an object') },
    )
    .superRefine(checkClassMatchesUnit, { when: () => true })
    .transform(({ unitType, magnitude }): Quantity => Quantity.of(magnitude, unitType[1]));
}

const example = {
  '@class': quantityClassName('Piece'),
  unitType: [unitClassName('Piece'), 'PC'],
  magnitude: 3,
};

const description =
  `An amount in a unit of measure. Units: PC, DOZ (${UNITS_PKG}.Piece / PieceUnit); ` +
  `MG, G, KG, T (${UNITS_PKG}.Weight / WeightUnit). \`@class\` may be omitted.`;

/** A quantity of any sign (e.g. a stored value). Parses to a Quantity; every problem is an issue on its field. */
export const quantitySchema = quantityInputSchema(false).openapi('Quantity', { description, example });

/** A quantity that must be greater than zero (D2: baseUnit, units, create, move, allocate). */
export const positiveQuantitySchema = quantityInputSchema(true).openapi('PositiveQuantity', {
  description: `${description} The magnitude must be greater than 0.`,
  example,
});

/** A quantity as responses render it: always with `@class`, the magnitude as a JSON number (D2, D9). */
export const quantityResponseSchema = z
  .object({ '@class': z.string(), unitType: z.tuple([z.string(), z.string()]), magnitude: z.number() })
  .strict()
  .openapi('QuantityValue', { description: 'An amount in a unit of measure, as the service renders it', example });
