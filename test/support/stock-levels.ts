import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { allocate } from '../../src/allocation/service.js';
import { ApiError } from '../../src/http/api-error.js';
import { withTransaction } from '../../src/db/tx.js';
import { Quantity } from '../../src/units/quantity.js';
import type { QuantityJson } from './builders.js';
import { call, type Target } from './stock-api.js';

/**
 * Stock levels (D31) checked against what the test reads and computes itself: the sums over the units, D23's
 * candidates written out here independently of the service's SQL, allocation run on a copy of the state (a
 * rolled-back transaction), and the ledger (D24) replayed.
 */

const WEIGHT_CODES: Record<string, number> = { MG: 1, G: 1000, KG: 1_000_000, T: 1_000_000_000 };
const PIECE_CODES: Record<string, number> = { PC: 1, DOZ: 12 };

/** A rendered Quantity in the kind's smallest unit (PC or MG). */
export function smallest(quantity: QuantityJson): Decimal {
  const code = quantity.unitType[1];
  return new Decimal(String(quantity.magnitude)).times(WEIGHT_CODES[code] ?? PIECE_CODES[code]!);
}

export interface Figures {
  onHand: Decimal;
  reserved: Decimal;
}

/** sum(qty_base) and sum(reserved_base) over the Product's units. */
export async function unitSums(pool: pg.Pool, sku: string): Promise<Figures> {
  const { rows } = await pool.query<{ onHand: string; reserved: string }>(
    `SELECT COALESCE(sum(pu.qty_base), 0)::text AS "onHand", COALESCE(sum(pu.reserved_base), 0)::text AS reserved
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku = $1`,
    [sku],
  );
  return { onHand: new Decimal(rows[0]!.onHand), reserved: new Decimal(rows[0]!.reserved) };
}

/**
 * D23 written out: units in a LoadUnit, AVAILABLE, of an AVAILABLE Product, LoadUnit not locked, and in the named
 * groups or their direct children when groups are named; what is left of each after its reservations.
 */
export async function allocatableFree(pool: pg.Pool, sku: string, groups: string[] | null): Promise<Decimal> {
  const { rows } = await pool.query<{ free: string }>(
    `SELECT COALESCE(sum(pu.qty_base - pu.reserved_base), 0)::text AS free
       FROM packaging_unit pu
       JOIN product p ON p.id = pu.product_id
       JOIN load_unit lu ON lu.id = pu.load_unit_id
       JOIN transport_unit tu ON tu.id = lu.transport_unit_id
       LEFT JOIN location loc ON loc.id = tu.actual_location_id
       LEFT JOIN location_group g ON g.id = loc.location_group_id
       LEFT JOIN location_group parent ON parent.id = g.parent_id
      WHERE p.sku = $1 AND pu.state = 'AVAILABLE' AND p.availability_state = 'AVAILABLE' AND NOT lu.locked
        AND ($2::text[] IS NULL OR g.name = ANY($2::text[]) OR parent.name = ANY($2::text[]))`,
    [sku, groups],
  );
  return new Decimal(rows[0]!.free);
}

class RolledBack extends Error {}

/**
 * Whether `allowPartial=false` allocation of that much (in the smallest unit of the Product's kind) succeeds, run
 * through the service on the state as it is and rolled back.
 */
export async function allocationAccepts(
  pool: pg.Pool,
  sku: string,
  amount: Decimal,
  smallestCode: 'PC' | 'MG',
  groups: string[] | null,
): Promise<boolean> {
  try {
    await withTransaction(pool, async (tx) => {
      const request = { sku, qty: Quantity.of(amount.toString(), smallestCode) };
      const options = { groupNames: groups ?? undefined, allowPartial: false };
      await allocate(tx, request, options, { subject: 'stock-level-check', requestId: 'stock-level-check' });
      throw new RolledBack();
    });
  } catch (error) {
    if (error instanceof RolledBack) return true;
    if (error instanceof ApiError && error.status === 409) return false;
    throw error;
  }
  return false;
}

interface Reading {
  onHand: QuantityJson;
  reserved: QuantityJson;
  available?: QuantityJson;
  rows?: { onHand: QuantityJson; reserved: QuantityJson; available: QuantityJson }[];
}

async function reading(target: Target, query: string): Promise<Reading> {
  const response = await call(target, 'get', `/v1/stock?${query}`);
  if (response.status !== 200) throw new Error(`GET /v1/stock?${query}: ${response.status} ${response.text}`);
  return response.body as Reading;
}

const differ = (what: string, actual: Decimal, expected: Decimal): string[] =>
  actual.equals(expected) ? [] : [`${what}: answered ${String(actual)}, expected ${String(expected)}`];

function sumOf(rows: NonNullable<Reading['rows']>, figure: 'onHand' | 'reserved' | 'available'): Decimal {
  return rows.reduce((total, row) => total.plus(smallest(row[figure])), new Decimal(0));
}

/**
 * Everything D31 promises of a Product's reading now, as lines naming what differs: the figures equal the sums over
 * the units and D23's candidates, allocating `available` succeeds and one smallest unit more does not, and the rows
 * by LocationGroup and by Location add up to the totals. With `group`: the same within that group.
 */
export async function stockLevelProblems(
  target: Target,
  pool: pg.Pool,
  sku: string,
  smallestCode: 'PC' | 'MG',
  group: string | null,
): Promise<string[]> {
  const problems: string[] = [];
  const sums = await unitSums(pool, sku);
  const all = await reading(target, `sku=${encodeURIComponent(sku)}`);
  problems.push(...differ(`${sku} onHand`, smallest(all.onHand), sums.onHand));
  problems.push(...differ(`${sku} reserved`, smallest(all.reserved), sums.reserved));
  for (const [groups, answer] of [
    [null, all],
    ...(group
      ? [[[group], await reading(target, `sku=${encodeURIComponent(sku)}&sourceLocationGroupNames=${group}`)]]
      : []),
  ] as [string[] | null, Reading][]) {
    const where = groups ? ` in ${groups.join(',')}` : '';
    const available = smallest(answer.available!);
    problems.push(...differ(`${sku} available${where}`, available, await allocatableFree(pool, sku, groups)));
    if (available.gt(0) && !(await allocationAccepts(pool, sku, available, smallestCode, groups))) {
      problems.push(`${sku}: allocating the available ${String(available)}${where} was refused`);
    }
    if (await allocationAccepts(pool, sku, available.plus(1), smallestCode, groups)) {
      problems.push(`${sku}: allocating one more than the available ${String(available)}${where} succeeded`);
    }
  }
  for (const by of ['locationGroup', 'location']) {
    const { rows } = await reading(target, `sku=${encodeURIComponent(sku)}&by=${by}`);
    problems.push(...differ(`${sku} rows by ${by}: onHand`, sumOf(rows!, 'onHand'), smallest(all.onHand)));
    problems.push(...differ(`${sku} rows by ${by}: reserved`, sumOf(rows!, 'reserved'), smallest(all.reserved)));
    problems.push(...differ(`${sku} rows by ${by}: available`, sumOf(rows!, 'available'), smallest(all.available!)));
  }
  return problems;
}

/** The Product's onHand and reserved at an instant, by replaying the ledger: each unit's last row up to then. */
export async function replayedLedger(pool: pg.Pool, sku: string, at: string): Promise<Figures> {
  const { rows } = await pool.query<{ qtyAfter: string; reservedAfter: string }>(
    `SELECT DISTINCT ON (m.packaging_unit_pkey) m.qty_after::text AS "qtyAfter", m.reserved_after::text AS "reservedAfter"
       FROM stock_movement m JOIN product p ON p.id = m.product_id
      WHERE p.sku = $1 AND m.occurred_at <= $2::timestamptz
      ORDER BY m.packaging_unit_pkey, m.occurred_at DESC, m.id DESC`,
    [sku, at],
  );
  return rows.reduce<Figures>(
    (figures, row) => ({
      onHand: figures.onHand.plus(row.qtyAfter),
      reserved: figures.reserved.plus(row.reservedAfter),
    }),
    { onHand: new Decimal(0), reserved: new Decimal(0) },
  );
}

/** What GET /v1/stock?sku=&at= answers, in the smallest unit. */
export async function stockAnsweredAt(target: Target, sku: string, at: string): Promise<Figures> {
  const answer = await reading(target, `sku=${encodeURIComponent(sku)}&at=${encodeURIComponent(at)}`);
  return { onHand: smallest(answer.onHand), reserved: smallest(answer.reserved) };
}
