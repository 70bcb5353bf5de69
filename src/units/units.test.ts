import { describe, expect, it } from 'vitest';
import { quantityClassName, UNIT_CODES, UNIT_KINDS, unitByCode, unitClassName, UNITS, UNITS_PKG } from './units.js';

describe('unit catalogue', () => {
  it('uses the OpenWMS units package (D1)', () => {
    expect(UNITS_PKG).toBe('org.openwms.core.units.api');
  });

  it('lists exactly PC, DOZ, MG, G, KG and T', () => {
    expect([...UNIT_CODES]).toEqual(['PC', 'DOZ', 'MG', 'G', 'KG', 'T']);
    expect(UNITS.map((u) => u.code)).toEqual([...UNIT_CODES]);
  });

  it.each([
    ['PC', 'Piece', '1'],
    ['DOZ', 'Piece', '12'],
    ['MG', 'Weight', '1'],
    ['G', 'Weight', '1000'],
    ['KG', 'Weight', '1000000'],
    ['T', 'Weight', '1000000000'],
  ])('defines %s as a %s unit of %s smallest units', (code, kind, factor) => {
    const unit = unitByCode(code);
    expect(unit?.kind).toBe(kind);
    expect(unit?.factor.toFixed()).toBe(factor);
  });

  it('gives each kind exactly one unit of factor 1, its smallest unit', () => {
    for (const kind of UNIT_KINDS) {
      const ones = UNITS.filter((u) => u.kind === kind && u.factor.eq(1));
      expect(ones).toHaveLength(1);
      expect(UNITS.filter((u) => u.kind === kind).every((u) => u.factor.gte(1))).toBe(true);
    }
  });

  it('makes every factor of a kind a whole multiple of every smaller factor of that kind', () => {
    for (const a of UNITS) {
      for (const b of UNITS.filter((u) => u.kind === a.kind && u.factor.lte(a.factor))) {
        expect(a.factor.mod(b.factor).isZero()).toBe(true);
      }
    }
  });

  it('looks codes up case-sensitively and knows no other codes', () => {
    expect(unitByCode('KG')?.code).toBe('KG');
    expect(unitByCode('kg')).toBeUndefined();
    expect(unitByCode('Pc')).toBeUndefined();
    expect(unitByCode('L')).toBeUndefined();
    expect(unitByCode('')).toBeUndefined();
    expect(unitByCode(' PC')).toBeUndefined();
  });

  it('names the quantity and unit classes of each kind', () => {
    expect(quantityClassName('Piece')).toBe('org.openwms.core.units.api.Piece');
    expect(unitClassName('Piece')).toBe('org.openwms.core.units.api.PieceUnit');
    expect(quantityClassName('Weight')).toBe('org.openwms.core.units.api.Weight');
    expect(unitClassName('Weight')).toBe('org.openwms.core.units.api.WeightUnit');
  });

  it('cannot be altered at run time', () => {
    expect(Object.isFrozen(UNITS)).toBe(true);
    expect(Object.isFrozen(UNITS[0])).toBe(true);
    expect(Object.isFrozen(UNIT_CODES)).toBe(true);
  });
});
