import type pg from 'pg';
import { MIXED_PREFIX } from '../bench/scenario-6-mixed.js';
import {
  ledgerViolations,
  reservationMismatches,
  reservationViolations,
  reservedTotal,
  stockLevelViolations,
} from '../bench/stock-checks.js';
import { count } from './format.js';
import type { SoakTally } from './tally.js';

export interface CheckResult {
  readonly check: string;
  readonly passed: boolean;
  readonly summary: string;
  /** The first rows that break it. */
  readonly problems: readonly string[];
}

/** Total quantity (PC, exact decimal text) of each mixed Product: moves must leave it unchanged. */
export async function mixedProductTotals(pool: pg.Pool): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ sku: string; qty: string }>(
    `SELECT p.sku, trim_scale(COALESCE(sum(pu.qty_base), 0))::text AS qty
       FROM product p LEFT JOIN packaging_unit pu ON pu.product_id = p.id
      WHERE p.sku LIKE $1 || '-%' GROUP BY p.sku`,
    [MIXED_PREFIX],
  );
  return new Map(rows.map((row) => [row.sku, row.qty]));
}

/** Acknowledged moves without a ledger row carrying their request id: answered 204, yet not in the database. */
async function lostMoves(pool: pg.Pool, requestIds: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ request_id: string }>(
    `SELECT DISTINCT request_id FROM stock_movement WHERE request_id LIKE 'soak-%'`,
  );
  const recorded = new Set(rows.map((row) => row.request_id));
  return requestIds.filter((id) => !recorded.has(id)).map((id) => `move ${id}: answered 204, no ledger row`);
}

function result(check: string, problems: readonly string[], summary: string): CheckResult {
  return { check, passed: problems.length === 0, summary: problems.length === 0 ? summary : problems[0]!, problems };
}

/** The stock invariants and every acknowledged write, read straight from PostgreSQL after the load. */
export async function endChecks(
  pool: pg.Pool,
  tally: SoakTally,
  seededTotals: ReadonlyMap<string, string>,
): Promise<CheckResult[]> {
  const reservations = await reservationViolations(pool);
  const ledger = await ledgerViolations(pool, MIXED_PREFIX);
  const stockLevels = await stockLevelViolations(pool);
  const answered = tally.allocations.byReservation;
  const mismatches = await reservationMismatches(pool, answered);
  const reserved = await reservedTotal(pool, MIXED_PREFIX);
  const lost = await lostMoves(pool, tally.acknowledgedMoves);
  const totals = await mixedProductTotals(pool);
  const changed = [...seededTotals]
    .filter(([sku, qty]) => totals.get(sku) !== qty)
    .map(([sku, qty]) => `${sku}: seeded ${qty} PC, now ${totals.get(sku) ?? 'no row'}`);
  const seededPieces = [...seededTotals.values()].reduce((sum, qty) => sum + Number(qty), 0);
  return [
    result(
      'reservations (every unit)',
      reservations,
      'quantity ≥ 0, 0 ≤ reserved ≤ quantity and reserved = active reservations on every unit',
    ),
    result('ledger (mixed Products)', ledger, "every unit's latest ledger row ends at its quantity and reservation"),
    result(
      'stock levels (every Product)',
      stockLevels,
      'the kept per-Product sums that stock levels read equal the sums over the units',
    ),
    result(
      'acknowledged allocations stored',
      mismatches,
      `${count(answered.size)} reservations answered 200 (${count(tally.allocations.allocated())} PC), each stored as answered; ${count(reserved)} PC reserved in all`,
    ),
    result(
      'acknowledged moves stored',
      lost.slice(0, 20),
      `${count(tally.acknowledgedMoves.length)} moves answered 204, each with its ledger rows`,
    ),
    result(
      'quantity conserved per Product',
      changed.slice(0, 20),
      `${count(seededTotals.size)} Products, ${count(seededPieces)} PC in all, each total unchanged by the moves`,
    ),
  ];
}

/** Issue 37: every Product the read-your-writes probe was answered 201 for is stored. */
export async function readYourWritesStored(pool: pg.Pool, skus: readonly string[]): Promise<CheckResult> {
  const { rows } = await pool.query<{ sku: string }>('SELECT sku FROM product WHERE sku = ANY($1)', [skus]);
  const stored = new Set(rows.map((row) => row.sku));
  const lost = skus.filter((sku) => !stored.has(sku)).map((sku) => `Product ${sku}: answered 201, not stored`);
  return result(
    'acknowledged creates stored',
    lost.slice(0, 20),
    `${count(skus.length)} Products the read-your-writes probe created (201), each stored`,
  );
}
