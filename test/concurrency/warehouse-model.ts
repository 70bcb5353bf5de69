import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import type pg from 'pg';
import { aQuantity, type QuantityJson } from '../support/builders.js';
import {
  givenDivided,
  givenGroups,
  givenLocations,
  givenProduct,
  givenTransportUnit,
  unique,
  type Target,
} from '../support/stock-api.js';
import { storedUnits, type StoredUnit } from '../support/stock-invariants.js';

/**
 * A small warehouse (2 Products, 3 Locations, 2 TransportUnits of 2 LoadUnits each), the stock operations a
 * property test applies to it, and what each operation must do to the stock per place (D21-D23).
 */
export interface Warehouse {
  /** Product 0 counts pieces (PC, DOZ), product 1 weighs (G, KG). */
  skus: [string, string];
  /** Group 1 is a child of group 0; Location 0 stands in group 1, Location 1 in group 2, Location 2 in none. */
  groups: [string, string, string];
  locations: { locationId: string; erpCode: string; id: number }[];
  loadUnits: { transportUnitBK: string; position: string; pKey: string; id: number }[];
}

export async function aWarehouse(app: Target, pool: pg.Pool): Promise<Warehouse> {
  const skus: [string, string] = [
    await givenProduct(app, { baseUnit: aQuantity(1, 'PC') }),
    await givenProduct(app, { baseUnit: aQuantity(1, 'G') }),
  ];
  const groups: [string, string, string] = [unique('PG'), unique('PG'), unique('PG')];
  await givenGroups(app, { name: groups[1], parent: groups[0] }, { name: groups[0] }, { name: groups[2] });
  const seeds = [groups[1], groups[2], undefined].map((locationGroupName) => {
    const locationId = unique('PLOC');
    return { locationId, erpCode: `ERP-${locationId}`, ...(locationGroupName ? { locationGroupName } : {}) };
  });
  await givenLocations(app, ...seeds);
  const bks = [unique('PTU'), unique('PTU')];
  for (const [i, bk] of bks.entries()) {
    await givenTransportUnit(app, bk, seeds[i]!.locationId);
    await givenDivided(app, bk, 2);
  }
  const locationRows = await pool.query<{ id: string; location_id: string }>(
    'SELECT id, location_id FROM location WHERE location_id = ANY($1::text[])',
    [seeds.map((seed) => seed.locationId)],
  );
  const loadUnitRows = await pool.query<{ id: string; p_key: string; bk: string; position: string }>(
    `SELECT lu.id, lu.p_key, tu.bk, lu.physical_position AS position FROM load_unit lu
       JOIN transport_unit tu ON tu.id = lu.transport_unit_id WHERE tu.bk = ANY($1::text[])
      ORDER BY tu.bk = $2 DESC, lu.physical_position`,
    [bks, bks[0]],
  );
  return {
    skus,
    groups,
    locations: seeds.map(({ locationId, erpCode }) => ({
      locationId,
      erpCode,
      id: Number(locationRows.rows.find((row) => row.location_id === locationId)!.id),
    })),
    loadUnits: loadUnitRows.rows.map((row) => ({
      transportUnitBK: row.bk,
      position: row.position,
      pKey: row.p_key,
      id: Number(row.id),
    })),
  };
}

/** An amount as the generator draws it; its unit follows the Product (pieces or weight). */
export interface Amount {
  n: number;
  big: boolean;
}

const KG_STEPS = [0.5, 1, 1.5, 2];

export function quantityOf(product: number, amount: Amount): QuantityJson {
  if (product === 0) return amount.big ? aQuantity((amount.n % 2) + 1, 'DOZ') : aQuantity(amount.n, 'PC');
  return amount.big ? aQuantity(KG_STEPS[amount.n % 4], 'KG') : aQuantity(amount.n * 50, 'G');
}

const FACTORS: Record<string, number> = { PC: 1, DOZ: 12, MG: 1, G: 1000, KG: 1_000_000, T: 1_000_000_000 };

/** The amount in the kind's smallest unit (PC or MG), as qty_base stores it. */
export function baseOf(quantity: QuantityJson): Decimal {
  return new Decimal(String(quantity.magnitude)).times(FACTORS[quantity.unitType[1]]!);
}

export type Place = { lu: number } | { loc: number };

export type Command =
  | { t: 'createInLoadUnit'; p: number; lu: number; amount: Amount }
  | { t: 'createOnLocation'; p: number; loc: number; amount: Amount }
  | { t: 'moveUnit'; unit: number; to: Place; byPKey: boolean; amount: Amount | null }
  | { t: 'moveFromLoadUnit'; p: number; lu: number; to: Place; amount: Amount | null }
  | { t: 'moveBetweenLocations'; p: number; loc: number; toLoc: number; amount: Amount | null }
  | { t: 'moveToLoadUnit'; p: number; loc: number; lu: number; amount: Amount | null }
  | { t: 'deleteUnit'; unit: number }
  | { t: 'deleteOnLocation'; p: number; loc: number; amount: Amount | null }
  | { t: 'reserve'; p: number; amount: Amount; allowPartial: boolean }
  | { t: 'release'; reservation: number }
  | { t: 'lockLoadUnit'; lu: number; locked: boolean }
  | { t: 'productState'; p: number; state: 'AVAILABLE' | 'LOCKED' | 'QC_LOCKED' }
  | { t: 'reportProblem'; unit: number; amount: Amount }
  | { t: 'releaseUnit'; unit: number }
  | { t: 'moveTransportUnit'; tu: number; loc: number };

const product = fc.integer({ min: 0, max: 1 });
const lu = fc.integer({ min: 0, max: 3 });
const loc = fc.integer({ min: 0, max: 2 });
const amount = fc.record({ n: fc.integer({ min: 1, max: 30 }), big: fc.boolean() });
const maybeAmount = fc.option(amount, { nil: null });
const place: fc.Arbitrary<Place> = fc.oneof(fc.record({ lu }), fc.record({ loc }));
const index = fc.nat({ max: 50 });

const createArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ t: fc.constant('createInLoadUnit' as const), p: product, lu, amount }),
  fc.record({ t: fc.constant('createOnLocation' as const), p: product, loc, amount }),
);

export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: createArbitrary },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('moveUnit' as const),
      unit: index,
      to: place,
      byPKey: fc.boolean(),
      amount: maybeAmount,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('moveFromLoadUnit' as const),
      p: product,
      lu,
      to: place,
      amount: maybeAmount,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('moveBetweenLocations' as const),
      p: product,
      loc,
      toLoc: loc,
      amount: maybeAmount,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('moveToLoadUnit' as const), p: product, loc, lu, amount: maybeAmount }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('deleteUnit' as const), unit: index }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('deleteOnLocation' as const), p: product, loc, amount: maybeAmount }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('reserve' as const), p: product, amount, allowPartial: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('release' as const), reservation: index }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('lockLoadUnit' as const), lu, locked: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('productState' as const),
      p: product,
      state: fc.constantFrom('AVAILABLE' as const, 'LOCKED' as const, 'QC_LOCKED' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('reportProblem' as const), unit: index, amount }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('releaseUnit' as const), unit: index }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('moveTransportUnit' as const), tu: fc.integer({ min: 0, max: 1 }), loc }),
  },
);

/** Up to 15 operations; the first two to four create stock, so that the rest finds something to work on. */
export const commandsArbitrary: fc.Arbitrary<Command[]> = fc
  .tuple(
    fc.array(createArbitrary, { minLength: 2, maxLength: 4 }),
    fc.array(commandArbitrary, { minLength: 5, maxLength: 11 }),
  )
  .map(([creates, rest]) => [...creates, ...rest]);

/** The stock of the warehouse's Products as stored, with sums per (sku, place). */
export interface Snapshot {
  units: StoredUnit[];
  /** `sku|lu:<id>` or `sku|loc:<id>` → sum of qty_base (zero sums left out). */
  qty: Map<string, Decimal>;
  /** sku → sum of reserved_base. */
  reserved: Map<string, Decimal>;
}

export const holderOf = (unit: Pick<StoredUnit, 'loadUnitId' | 'locationId'>): string =>
  unit.loadUnitId !== null ? `lu:${unit.loadUnitId}` : `loc:${unit.locationId}`;

export async function snapshot(pool: pg.Pool, w: Warehouse): Promise<Snapshot> {
  const units = await storedUnits(pool, w.skus);
  const qty = new Map<string, Decimal>();
  const reserved = new Map<string, Decimal>(w.skus.map((sku) => [sku, new Decimal(0)]));
  for (const unit of units) {
    const key = `${unit.sku}|${holderOf(unit)}`;
    qty.set(key, (qty.get(key) ?? new Decimal(0)).plus(unit.qtyBase));
    reserved.set(unit.sku, reserved.get(unit.sku)!.plus(unit.reservedBase));
  }
  for (const [key, value] of qty) if (value.isZero()) qty.delete(key);
  return { units, qty, reserved };
}

/** Units of the sku at the holder: their total and their unreserved part. */
export function stockAt(s: Snapshot, sku: string, holder: string): { total: Decimal; free: Decimal } {
  const units = s.units.filter((unit) => unit.sku === sku && holderOf(unit) === holder);
  return {
    total: units.reduce((sum, unit) => sum.plus(unit.qtyBase), new Decimal(0)),
    free: units.reduce((sum, unit) => sum.plus(unit.qtyBase).minus(unit.reservedBase), new Decimal(0)),
  };
}

/** D21: `quantity` absent moves everything there is; given, that much of the unreserved part or less. */
export function movedAmount(stock: { total: Decimal; free: Decimal }, wanted: Decimal | null): Decimal {
  return wanted === null ? stock.total : Decimal.min(wanted, stock.free);
}

/** `actual` and `expected` sums per key, as readable lines for the keys that differ. */
export function differences(actual: Map<string, Decimal>, expected: Map<string, Decimal>): string[] {
  const keys = new Set([...actual.keys(), ...expected.keys()]);
  return [...keys]
    .filter((key) => !(actual.get(key) ?? new Decimal(0)).equals(expected.get(key) ?? new Decimal(0)))
    .map((key) => `${key}: expected ${String(expected.get(key) ?? 0)}, stored ${String(actual.get(key) ?? 0)}`);
}

/** What a successful (2xx) operation must change: qty per `sku|holder`, reserved and the total per sku. */
export interface Effect {
  qty: [string, Decimal][];
  reserved: [string, Decimal][];
  total: [string, Decimal][];
}

export const NO_EFFECT: Effect = { qty: [], reserved: [], total: [] };

export function holderKey(w: Warehouse, place: Place): string {
  return 'lu' in place ? `lu:${w.loadUnits[place.lu]!.id}` : `loc:${w.locations[place.loc]!.id}`;
}

export function moveEffect(sku: string, from: string, to: string, moved: Decimal): Effect {
  const qty: [string, Decimal][] = [
    [`${sku}|${from}`, moved.negated()],
    [`${sku}|${to}`, moved],
  ];
  return { ...NO_EFFECT, qty };
}

/** A stock change at one place that changes the Product's total too (create, delete). */
export function stockEffect(sku: string, holder: string, delta: Decimal): Effect {
  return { qty: [[`${sku}|${holder}`, delta]], reserved: [], total: [[sku, delta]] };
}

export function plus(map: Map<string, Decimal>, entries: [string, Decimal][]): Map<string, Decimal> {
  const result = new Map(map);
  for (const [key, delta] of entries) result.set(key, (result.get(key) ?? new Decimal(0)).plus(delta));
  return result;
}
