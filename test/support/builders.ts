/**
 * Request-body builders shared by the test suites. Each returns a minimal valid value; overrides replace fields,
 * and an override of `undefined` leaves the field out of the JSON that is sent.
 */
export const UNITS_PKG = 'org.openwms.core.units.api';

export type Json = Record<string, unknown>;
export type UnitKind = 'Piece' | 'Weight';

export interface QuantityJson {
  '@class'?: string;
  unitType: [string, string];
  magnitude: unknown;
}

export interface ProductJson extends Json {
  sku: string;
  baseUnit: QuantityJson;
}

export interface ProductUnitJson extends Json {
  quantity: QuantityJson;
}

const WEIGHT_CODES: ReadonlySet<string> = new Set(['MG', 'G', 'KG', 'T']);

/** D2: PC and DOZ count pieces, MG/G/KG/T weigh; anything else is treated as a piece code. */
export function kindOf(code: string): UnitKind {
  return WEIGHT_CODES.has(code) ? 'Weight' : 'Piece';
}

/** A quantity in the D2 JSON shape, `@class` included, in the property order the service writes. */
export function aQuantity(magnitude: unknown, code = 'PC'): QuantityJson {
  const kind = kindOf(code);
  return { '@class': `${UNITS_PKG}.${kind}`, unitType: [`${UNITS_PKG}.${kind}Unit`, code], magnitude };
}

let sequence = 0;

/** A SKU no other call in this process returns. */
export function uniqueSku(prefix = 'SKU'): string {
  sequence += 1;
  return `${prefix}-${process.pid}-${sequence}`;
}

/**
 * A Product with only the required fields (a fresh SKU and 1 PC as base unit) plus the overrides. The type claims the
 * required fields even when an override of a validation test replaces them with something else.
 */
export function aProduct(overrides: Json = {}): ProductJson {
  return { sku: uniqueSku(), baseUnit: aQuantity(1), ...overrides } as ProductJson;
}

/** A ProductUnit of one dozen pieces plus the overrides. */
export function aProductUnit(overrides: Json = {}): ProductUnitJson {
  return { quantity: aQuantity(1, 'DOZ'), ...overrides } as ProductUnitJson;
}

export function aStackingRule(sku: string, noProducts = 1): { noProducts: number; allowedProduct: { sku: string } } {
  return { noProducts, allowedProduct: { sku } };
}
