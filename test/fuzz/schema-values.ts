import fc from 'fast-check';
import { dereference, referenceName, type ApiDocument, type Schema } from './api-document.js';
import { RawJson } from './json-text.js';
import { KnownKey, type KeyKind } from './known-keys.js';

/** Field and parameter names whose values should usually name real data. */
const KEY_HINTS: Readonly<Record<string, KeyKind>> = {
  sku: 'sku',
  transportUnitBK: 'transportUnitBK',
  targetTransportUnitBK: 'transportUnitBK',
  bk: 'transportUnitBK',
  luPos: 'luPos',
  physicalPosition: 'luPos',
  targetLoadUnitPosition: 'luPos',
  locationId: 'locationId',
  erpCode: 'erpCode',
  newLocation: 'erpCode',
  name: 'groupName',
  parent: 'groupName',
  locationGroupName: 'groupName',
  sourceLocationGroupNames: 'groupName',
  productPKey: 'productPKey',
  reservationId: 'reservationId',
  loadUnitType: 'typeName',
  transportUnitType: 'typeName',
};

/** Values that mean something to a few string parameters the schema leaves open. */
const STRING_CHOICES: Readonly<Record<string, readonly string[]>> = {
  uom: ['PC', 'DOZ', '12 PC', '1 PC', '2 DOZ', 'KG', '1 KG', 'G', '0.5 KG'],
  sortDirection: ['ASC', 'DESC', 'asc', 'desc'],
};

/**
 * Rules the service checks beyond the schema: one side of each group, never both (`actualLocation` by
 * locationId or erpCode; a move's target as a Location or a LoadUnit). Applied when neither side is required.
 */
const EXCLUSIVE_GROUPS: readonly (readonly (readonly string[])[])[] = [
  [['locationId'], ['erpCode']],
  [['actualLocation'], ['loadUnit']],
  [['actualLocation'], ['targetTransportUnitBK', 'targetLoadUnitPosition']],
];

/** Fields the schema leaves optional but the service requires. */
const REQUIRED_BY_SERVICE: Readonly<Record<string, readonly string[]>> = {
  TransportUnitCreate: ['transportUnitBK', 'transportUnitType', 'actualLocation'],
};
/** Fields that must repeat what the path or the stored row says (a mismatch is only a 400 or 409): left out. */
const LEFT_OUT: Readonly<Record<string, readonly string[]>> = {
  MovePackagingUnit: ['pKey', 'product'],
  ProductUpdate: ['ol'],
};
/** Keys a create usually names anew (a known one is only a 409). */
const MOSTLY_NEW: Readonly<Record<string, readonly string[]>> = {
  ProductCreate: ['sku'],
  TransportUnitCreate: ['transportUnitBK'],
  LoadUnitDivide: ['transportUnitBK'],
  LoadUnitDivideForm: ['transportUnitBK'],
};

export interface ValueContext {
  /** The property or parameter the value is for. */
  readonly name?: string;
  /** The enclosing property (`loadUnit` for `loadUnit.pKey`). */
  readonly parent?: string;
  /** The component schema the value sits in (`ProductUpdate`). */
  readonly component?: string;
  /** True for the component's own object, false for anything nested in it. */
  readonly componentRoot?: boolean;
  /** The operation path, for what a `pKey` names. */
  readonly path?: string;
}

/**
 * A placeholder for real data. Index 0 of every kind is seeded to fit together (the piece Product, its units'
 * Location, TransportUnit and LoadUnit), and is picked often, so that moves and allocations sometimes succeed.
 */
export function knownKey(kind: KeyKind): fc.Arbitrary<KnownKey> {
  const index = fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.nat({ max: 1_000 }), weight: 3 });
  return index.map((picked) => new KnownKey(kind, picked));
}

function pKeyKind(context: ValueContext): KeyKind {
  if (context.parent === 'loadUnit' || context.path?.startsWith('/v1/load-units/')) return 'loadUnitPKey';
  if (context.component === 'ProductUpdate' || context.path?.startsWith('/v1/products/')) return 'productPKey';
  return 'unitPKey';
}

/** The kind of real data a named value refers to, if any. */
export function hintOf(context: ValueContext): KeyKind | undefined {
  if (context.name === 'pKey') return pKeyKind(context);
  return context.name === undefined ? undefined : KEY_HINTS[context.name];
}

// Mostly pieces: most seeded Products count pieces, and a quantity of the wrong kind is only a 400.
const UNITS = [
  ['Piece', 'PC', 12],
  ['Piece', 'DOZ', 3],
  ['Weight', 'G', 1],
  ['Weight', 'KG', 1],
  ['Weight', 'MG', 1],
  ['Weight', 'T', 1],
] as const;

function magnitude(positive: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 30 }), weight: 8 },
    { arbitrary: fc.integer({ min: 1, max: 999_999 }).map((n) => new RawJson(String(n / 1000))), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        ...['0.000001', '999999999999999.999999', '123456789012345.123456', '1'].map((text) => new RawJson(text)),
      ),
      weight: 1,
    },
    { arbitrary: fc.constant(positive ? 1 : 0), weight: 1 },
  );
}

/** D2's quantity shape: `@class` matching the unit (or left out), a known unit, a magnitude within D2's digits. */
export function quantity(positive: boolean, weightOnly = false): fc.Arbitrary<Record<string, unknown>> {
  const units = UNITS.filter(([kind]) => !weightOnly || kind === 'Weight');
  const unit = fc.oneof(...units.map(([kind, code, weight]) => ({ arbitrary: fc.constant([kind, code]), weight })));
  return fc.tuple(unit, fc.boolean(), magnitude(positive)).map(([[kind, code], withClass, amount]) => ({
    ...(withClass && { '@class': `org.openwms.core.units.api.${kind}` }),
    unitType: [`org.openwms.core.units.api.${kind}Unit`, code],
    magnitude: amount,
  }));
}

const dateTime = fc
  .tuple(
    fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true }),
    fc.constantFrom('Z', '+02:00', '-05:30'),
  )
  .map(([date, zone]) => date.toISOString().replace('Z', zone));

const freshKey = fc.stringMatching(/^FZ-[A-Z0-9]{1,6}$/);

function stringValue(schema: Schema, context: ValueContext): fc.Arbitrary<unknown> {
  const hint = hintOf(context);
  const mostlyNew = context.parent === undefined && MOSTLY_NEW[context.component ?? '']?.includes(context.name ?? '');
  if (hint)
    return fc.oneof(
      { arbitrary: knownKey(hint), weight: mostlyNew ? 2 : 8 },
      { arbitrary: freshKey, weight: mostlyNew ? 8 : 2 },
    );
  const choices = context.name === undefined ? undefined : STRING_CHOICES[context.name];
  if (choices) return fc.constantFrom(...choices);
  if (schema.format === 'date-time') return dateTime;
  if (typeof schema.pattern === 'string')
    return fc.integer({ min: 1, max: context.name === 'parts' ? 4 : 50 }).map(String);
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Number(schema.maxLength ?? 40);
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength: Math.min(maxLength, 16) }), weight: 9 },
    { arbitrary: fc.constant('M'.repeat(maxLength)), weight: 1 },
  );
}

function numberValue(schema: Schema, integer: boolean, context: ValueContext): fc.Arbitrary<unknown> {
  // The feed's long poll would wait up to 30 s for each request; feed.test.ts covers its waiting.
  if (context.name === 'wait') return fc.constantFrom(0, 1);
  const min = Math.max(Number(schema.minimum ?? -1000), -1_000_000);
  const max = Math.min(Number(schema.maximum ?? 1000), 1_000_000);
  const boundaries = [schema.minimum, schema.maximum].filter((value): value is number => typeof value === 'number');
  const inside = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return boundaries.length === 0 ? inside : fc.oneof({ arbitrary: inside, weight: 5 }, fc.constantFrom(...boundaries));
}

function objectValue(
  document: ApiDocument,
  schema: Schema,
  context: ValueContext,
  depth: number,
): fc.Arbitrary<unknown> {
  const component = context.componentRoot ? (context.component ?? '') : '';
  const leftOut = LEFT_OUT[component] ?? [];
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>).filter(
    ([name]) => !leftOut.includes(name),
  );
  if (properties.length === 0) {
    return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
  }
  const required = [...((schema.required ?? []) as string[]), ...(REQUIRED_BY_SERVICE[component] ?? [])];
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of properties) {
    const inner = { ...context, name, parent: context.name, componentRoot: false };
    record[name] = valueOf(document, property, inner, depth + 1);
  }
  const names = properties.map(([name]) => name);
  const group = EXCLUSIVE_GROUPS.find((sides) =>
    sides.every((side) => side.every((name) => names.includes(name) && !required.includes(name))),
  );
  if (!group) return fc.record(record, { requiredKeys: required.filter((name) => name in record) });
  return fc.oneof(
    ...group.map((side) => {
      const others = group.flat().filter((name) => !side.includes(name));
      const kept = Object.fromEntries(Object.entries(record).filter(([name]) => !others.includes(name)));
      return fc.record(kept, { requiredKeys: [...required, ...side].filter((name) => name in kept) });
    }),
  );
}

/** An arbitrary of values valid for the schema, naming real data where a field's name suggests it. */
export function valueOf(
  document: ApiDocument,
  schema: Schema,
  context: ValueContext = {},
  depth = 0,
): fc.Arbitrary<unknown> {
  const component = referenceName(schema);
  if (component === 'PositiveQuantity') return quantity(true);
  if (component === 'Quantity') return fc.option(quantity(false, context.name === 'weight'), { freq: 8, nil: null });
  if (component) {
    return valueOf(document, dereference(document, schema), { ...context, component, componentRoot: true }, depth);
  }
  if (depth > 12) return fc.constant(null);
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return valueOf(document, schema.allOf[0] as Schema, context, depth);
  }
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((item) => valueOf(document, item, context, depth + 1)));
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as (string | undefined)[];
  const nullable = types.includes('null');
  const base = plainValue(
    document,
    schema,
    types.find((type) => type !== 'null'),
    context,
    depth,
  );
  return nullable ? fc.option(base, { freq: 20, nil: null }) : base;
}

function plainValue(
  document: ApiDocument,
  schema: Schema,
  type: string | undefined,
  context: ValueContext,
  depth: number,
): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) {
    return fc.constantFrom(...(schema.enum as unknown[]).filter((value) => value !== null));
  }
  switch (type) {
    case 'string':
      return stringValue(schema, context);
    case 'integer':
      return numberValue(schema, true, context);
    case 'number':
      return numberValue(schema, false, context);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      if (Array.isArray(schema.prefixItems)) {
        return fc.tuple(...(schema.prefixItems as Schema[]).map((item) => valueOf(document, item, context, depth + 1)));
      }
      const minLength = Number(schema.minItems ?? 0);
      const items = valueOf(document, (schema.items ?? {}) as Schema, context, depth + 1);
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(Number(schema.maxItems ?? 3), 3)) });
    }
    case 'object':
      return objectValue(document, schema, context, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
