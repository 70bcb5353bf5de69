import { describe, expect, it } from 'vitest';
import { parseUomExpression } from './uom.js';

describe('parseUomExpression (D2)', () => {
  it('reads a bare unit code as a unit without an amount', () => {
    const expr = parseUomExpression('PC');
    expect(expr?.unit.code).toBe('PC');
    expect(expr?.amount).toBeUndefined();
  });

  it.each([
    ['3 PC', '3', 'PC'],
    ['12 PC', '12', 'PC'],
    ['0.5 KG', '0.5', 'KG'],
    ['1.000 DOZ', '1', 'DOZ'],
    ['0.000001 T', '0.000001', 'T'],
    ['999999999999999.999999 MG', '999999999999999.999999', 'MG'],
  ])('reads %j as amount %s of %s', (text, amount, code) => {
    const expr = parseUomExpression(text);
    expect(expr?.unit.code).toBe(code);
    expect(expr?.amount?.toFixed()).toBe(amount);
  });

  it.each([
    ['two spaces', '3  PC'],
    ['the code first', 'PC 3'],
    ['a negative amount', '-3 PC'],
    ['a zero amount', '0 PC'],
    ['a zero decimal amount', '0.000 PC'],
    ['a plus sign', '+3 PC'],
    ['no space', '3PC'],
    ['a URL plus not yet decoded', '3+PC'],
    ['a tab', '3\tPC'],
    ['surrounding spaces', ' 3 PC '],
    ['a trailing space', 'PC '],
    ['a word', 'abc'],
    ['an empty text', ''],
    ['an unknown code', '3 XX'],
    ['a lower-case code', '3 pc'],
    ['an amount alone', '3'],
    ['an exponent', '1e3 PC'],
    ['a dot without digits', '3. PC'],
    ['a leading dot', '.5 PC'],
    ['more than 6 decimal places', '0.0000001 PC'],
    ['more than 15 integer digits', '1000000000000000 PC'],
  ])('rejects %s: %j', (_, text) => {
    expect(parseUomExpression(text)).toBeUndefined();
  });
});
