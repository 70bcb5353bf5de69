import fc from 'fast-check';
import { evilKey, evilString, evilValue } from './evil-values.js';
import { withKey } from './json-text.js';

/** How a valid body is broken: a node replaced, a field dropped, a field added, the root re-shaped. */
export type MutationKind = 'none' | 'replace' | 'drop' | 'extra' | 'string' | 'reshape' | 'hugeArray' | 'evilRoot';

export interface Mutation {
  readonly kind: MutationKind;
  readonly pick: number;
  readonly evil: unknown;
  readonly key: string;
  readonly text: unknown;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant<MutationKind>('none'), weight: 30 },
    { arbitrary: fc.constant<MutationKind>('replace'), weight: 25 },
    { arbitrary: fc.constant<MutationKind>('drop'), weight: 10 },
    { arbitrary: fc.constant<MutationKind>('extra'), weight: 12 },
    { arbitrary: fc.constant<MutationKind>('string'), weight: 8 },
    { arbitrary: fc.constant<MutationKind>('reshape'), weight: 5 },
    { arbitrary: fc.constant<MutationKind>('hugeArray'), weight: 2 },
    { arbitrary: fc.constant<MutationKind>('evilRoot'), weight: 8 },
  ),
  pick: fc.nat(),
  evil: evilValue,
  key: evilKey,
  text: evilString,
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A copy of the JSON structure; placeholders and raw literals are shared, never changed. */
function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: clone(value[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

interface Position {
  readonly container: Record<string, unknown> | unknown[];
  readonly key: string | number;
}

function positionsOf(value: unknown, found: Position[] = []): Position[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      found.push({ container: value, key: index });
      positionsOf(item, found);
    });
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      found.push({ container: value, key });
      positionsOf(value[key], found);
    }
  }
  return found;
}

function containersOf(value: unknown): (Record<string, unknown> | unknown[])[] {
  const all = [value, ...positionsOf(value).map((position) => readAt(position))];
  return all.filter((item): item is Record<string, unknown> | unknown[] => Array.isArray(item) || isPlainObject(item));
}

function readAt(position: Position): unknown {
  return (position.container as Record<string | number, unknown>)[position.key];
}

function writeAt(position: Position, item: unknown): void {
  Object.defineProperty(position.container, position.key, {
    value: item,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

const UNITS_PACKAGE = 'org.openwms.core.units.api';

/**
 * A copy whose quantities all measure one kind (the schema cannot say that a Product's units, or a move of it,
 * share the kind of its base unit); `weight` fields stay weights.
 */
export function ofOneKind(valid: unknown, kind: 'Piece' | 'Weight' | undefined): unknown {
  const value = clone(valid);
  if (!kind) return value;
  for (const position of positionsOf(value)) {
    const quantity = readAt(position);
    if (position.key === 'weight' || !isPlainObject(quantity) || !Array.isArray(quantity.unitType)) continue;
    if (String(quantity.unitType[0]).endsWith(`.${kind}Unit`)) continue;
    quantity.unitType = [`${UNITS_PACKAGE}.${kind}Unit`, kind === 'Piece' ? 'PC' : 'G'];
    if ('@class' in quantity) quantity['@class'] = `${UNITS_PACKAGE}.${kind}`;
  }
  return value;
}

/** Applies the mutation to a copy of a valid value. */
export function applyMutation(valid: unknown, change: Mutation): unknown {
  const value = clone(valid);
  const positions = positionsOf(value);
  const at = positions[change.pick % Math.max(positions.length, 1)];
  switch (change.kind) {
    case 'none':
      return value;
    case 'replace':
      if (!at) return change.evil;
      writeAt(at, change.evil);
      return value;
    case 'drop': {
      const fields = positions.filter((position) => !Array.isArray(position.container));
      const field = fields[change.pick % Math.max(fields.length, 1)];
      if (field) delete (field.container as Record<string, unknown>)[field.key as string];
      return value;
    }
    case 'extra': {
      const objects = containersOf(value).filter(isPlainObject);
      const target = objects[change.pick % Math.max(objects.length, 1)];
      if (!target) return value;
      const extended = withKey(target, change.key, change.evil);
      if (target === value) return extended;
      const holder = positions.find((position) => readAt(position) === target);
      if (holder) writeAt(holder, extended);
      return value;
    }
    case 'string': {
      const strings = positions.filter((position) => typeof readAt(position) === 'string');
      const text = strings[change.pick % Math.max(strings.length, 1)];
      if (text) writeAt(text, change.text);
      return value;
    }
    case 'reshape':
      return Array.isArray(value) ? value[0] : [value, value];
    case 'hugeArray': {
      // 10 001: one past the largest list any schema allows, so a valid element still cannot create 10 000 rows.
      const arrays = containersOf(value).filter((item): item is unknown[] => Array.isArray(item) && item.length > 0);
      const target = arrays[change.pick % Math.max(arrays.length, 1)];
      if (!target) return Array.from({ length: 10_001 }, () => value);
      target.push(...Array.from({ length: 10_001 - target.length }, () => target[0]));
      return value;
    }
    case 'evilRoot':
      return change.evil;
  }
}
