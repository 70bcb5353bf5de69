import { describe, expect, it } from 'vitest';
import { Dec } from './decimal.js';

describe('Dec', () => {
  it('prints the smallest and largest magnitudes in plain notation', () => {
    expect(new Dec('0.000001').toString()).toBe('0.000001');
    expect(new Dec('999999999999999.999999').times(1e9).toString()).toBe('999999999999999999999000');
    expect(new Dec('0.000001').div(1e9).toString()).toBe('0.000000000000001');
  });

  it('drops trailing zeros', () => {
    expect(new Dec('0.100').toString()).toBe('0.1');
  });

  it('adds decimal fractions exactly', () => {
    expect(new Dec('0.1').plus('0.2').toString()).toBe('0.3');
  });

  it('rounds half up at its 64-digit precision', () => {
    expect(new Dec(2).div(3).toString()).toBe(`0.${'6'.repeat(63)}7`);
  });
});
