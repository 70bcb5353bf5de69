import { Dec } from './decimal.js';
import { magnitudeProblem } from './quantity.js';
import { unitByCode, type UnitOfMeasure } from './units.js';

export interface UomExpression {
  /** Undefined when the expression is a bare unit code (`PC`). */
  readonly amount: Dec | undefined;
  readonly unit: UnitOfMeasure;
}

// D2: `PC` or `3 PC` / `0.5 KG`: a plain decimal (no sign, no exponent), exactly one space, an upper-case code.
const UOM_EXPRESSION = /^(?:(\d+(?:\.\d+)?) )?([A-Z]+)$/;

/**
 * Parses a UOM expression (D2), e.g. the `uom` query parameter (`3+PC` in a URL arrives decoded as `3 PC`).
 * Undefined for anything else, including an unknown code or an amount beyond the D2 magnitude limits.
 */
export function parseUomExpression(text: string): UomExpression | undefined {
  const match = UOM_EXPRESSION.exec(text);
  if (match === null) return undefined;
  const [, amountText, code = ''] = match;
  const unit = unitByCode(code);
  if (unit === undefined) return undefined;
  if (amountText === undefined) return { amount: undefined, unit };
  const amount = new Dec(amountText);
  // Zero is rejected like a negative amount: no unit holds zero items, so `0 PC` can never match a Product's unit.
  if (!amount.gt(0) || magnitudeProblem(amount) !== undefined) return undefined;
  return { amount, unit };
}
