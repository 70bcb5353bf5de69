import { Dec } from './decimal.js';

export const UNITS_PKG = 'org.openwms.core.units.api';

export type UnitKind = 'Piece' | 'Weight';

export const UNIT_KINDS: readonly UnitKind[] = ['Piece', 'Weight'];

export type UnitCode = 'PC' | 'DOZ' | 'MG' | 'G' | 'KG' | 'T';

export interface UnitOfMeasure {
  readonly code: UnitCode;
  readonly kind: UnitKind;
  /** Size of one unit, in the smallest unit of its kind (PC for Piece, MG for Weight). */
  readonly factor: Dec;
}

function unit(code: UnitCode, kind: UnitKind, factor: string): UnitOfMeasure {
  return Object.freeze({ code, kind, factor: new Dec(factor) });
}

export const UNITS: readonly UnitOfMeasure[] = Object.freeze([
  unit('PC', 'Piece', '1'),
  unit('DOZ', 'Piece', '12'),
  unit('MG', 'Weight', '1'),
  unit('G', 'Weight', '1000'),
  unit('KG', 'Weight', '1000000'),
  unit('T', 'Weight', '1000000000'),
]);

export const UNIT_CODES: readonly UnitCode[] = Object.freeze(UNITS.map((u) => u.code));

const byCode: ReadonlyMap<string, UnitOfMeasure> = new Map(UNITS.map((u) => [u.code, u]));

/** Codes are matched case-sensitively: `pc` is not a unit. */
export function unitByCode(code: string): UnitOfMeasure | undefined {
  return byCode.get(code);
}

/** The `@class` of a quantity of this kind, e.g. `org.openwms.core.units.api.Piece`. */
export function quantityClassName(kind: UnitKind): string {
  return `${UNITS_PKG}.${kind}`;
}

/** The class name in `unitType[0]`, e.g. `org.openwms.core.units.api.PieceUnit`. */
export function unitClassName(kind: UnitKind): string {
  return `${UNITS_PKG}.${kind}Unit`;
}
