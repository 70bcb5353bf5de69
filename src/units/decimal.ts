import { Decimal } from 'decimal.js';

// toExpNeg/toExpPos are wide enough that no magnitude we accept (15 + 6 digits, times 10^9 in the
// smallest unit) is ever printed in exponent notation.
export const Dec = Decimal.clone({
  precision: 64,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -30,
  toExpPos: 40,
});

export type Dec = InstanceType<typeof Dec>;
