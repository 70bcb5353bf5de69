/**
 * Keys of real data (seeded, or harvested from successful responses) that generated requests refer to. A
 * generated value holds a `KnownKey` placeholder; it is resolved only when the request is sent, so the
 * arbitraries stay pure while the pool grows with what the fuzzing itself creates.
 */
export const KEY_KINDS = [
  'sku',
  'productPKey',
  'unitPKey',
  'loadUnitPKey',
  'transportUnitBK',
  'luPos',
  'locationId',
  'erpCode',
  'groupName',
  'reservationId',
  'typeName',
] as const;

export type KeyKind = (typeof KEY_KINDS)[number];

export class KnownKey {
  constructor(
    readonly kind: KeyKind,
    readonly index: number,
  ) {}

  toString(): string {
    return `<${this.kind}#${this.index}>`;
  }
}

const POOL_LIMIT = 64;

export class KeyPool {
  private readonly keys = new Map<KeyKind, string[]>();

  add(kind: KeyKind, value: unknown): void {
    if (typeof value !== 'string' || value === '') return;
    const list = this.keys.get(kind) ?? [];
    if (list.includes(value)) return;
    list.push(value);
    // The seeded keys stay first; only the harvested tail is bounded.
    if (list.length > POOL_LIMIT) list.splice(POOL_LIMIT / 2, 1);
    this.keys.set(kind, list);
  }

  /** Forgets the keys of the kind whose data is gone (a deleted Product or unit, a replaced erpCode). */
  retain(kind: KeyKind, existing: ReadonlySet<string>): void {
    this.keys.set(
      kind,
      this.all(kind).filter((key) => existing.has(key)),
    );
  }

  resolve(key: KnownKey): string {
    const list = this.keys.get(key.kind) ?? [];
    return list[key.index % Math.max(list.length, 1)] ?? `no-${key.kind}`;
  }

  all(kind: KeyKind): readonly string[] {
    return this.keys.get(kind) ?? [];
  }

  /**
   * Learns pKeys, reservation ids and business keys from a successful JSON response; `ownKind` is the kind of
   * a pKey at the top of the resource (a Product, a LoadUnit or a PackagingUnit).
   */
  harvest(value: unknown, ownKind: KeyKind): void {
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 50)) this.harvest(item, ownKind);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, item] of Object.entries(value)) {
      if (key === 'pKey') this.add(ownKind, item);
      else if (key === 'reservationId') this.add('reservationId', item);
      else if (key === 'transportUnitBK') this.add('transportUnitBK', item);
      else if (key === 'sku') this.add('sku', item);
      else if (key === 'product') this.harvest(item, 'productPKey');
      else if (key === 'loadUnit') this.harvest(item, 'loadUnitPKey');
    }
  }
}

/** The kind of the top-level pKey in a response of that path. */
export function resourceKindOf(path: string): KeyKind {
  if (path.startsWith('/v1/products')) return 'productPKey';
  if (/^\/v1\/load-units\/[^/]+$/.test(path) || path.endsWith('/load-units')) return 'loadUnitPKey';
  return 'unitPKey';
}
