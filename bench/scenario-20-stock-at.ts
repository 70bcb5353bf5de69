import { timedRequest } from './http.js';
import { step } from './progress.js';
import { formatNumber, median, type BenchContext, type ScenarioResult } from './results.js';
import { productSku, seedProducts } from './seed.js';

const PREFIX = 'ATP';
const LEDGER_ROWS = Number(process.env.BENCH_STOCK_AT_ROWS ?? 100_000);
const ROWS_PER_TRANSACTION = 1_000;
const READINGS = 20;
const UNITS_PKG = 'org.openwms.core.units.api';
const ONE_PIECE = { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 1 };

/**
 * Scenario 20 (issue 35, D40): `GET /v1/stock?sku=&at=` on a Product with BENCH_STOCK_AT_ROWS (default 100,000)
 * ledger rows, written in transactions of 1,000 as a bulk load writes them. Read at an instant before all of them
 * (every row since then is subtracted) and at one after them (none is), READINGS times each, one after the other.
 */
export async function stockAt(bench: BenchContext): Promise<ScenarioResult> {
  const { db, service, authorization } = bench;
  await seedProducts(db.pool, PREFIX, 1, 1);
  const sku = productSku(PREFIX, 1);
  // A write through the service numbers an event, so a commit boundary stands before the rows...
  const touch = (): Promise<unknown> =>
    timedRequest(`${service.baseUrl}/v1/stock?sku=${sku}`, { method: 'GET', headers: { authorization } });
  await touch();
  const before = new Date().toISOString();
  step(`scenario 20: writing ${formatNumber(LEDGER_ROWS)} ledger rows of one Product`);
  for (let first = 0; first < LEDGER_ROWS; first += ROWS_PER_TRANSACTION) {
    await db.pool.query(
      `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                   reserved_before, reserved_after, actor, request_id)
       SELECT gen_random_uuid(), p.id, 'MOVE', 'PC', 10, 10, 0, 0, 'bench', 'bench-' || $2::text
         FROM product p, generate_series(1, $1::int) WHERE p.sku = $3`,
      [Math.min(ROWS_PER_TRANSACTION, LEDGER_ROWS - first), first, sku],
    );
  }
  // ...and one after them: any numbered event will do (a Product created through the API).
  await timedRequest(`${service.baseUrl}/v1/products`, {
    method: 'POST',
    headers: { authorization },
    body: Buffer.from(JSON.stringify({ sku: `${PREFIX}-AFTER-${Date.now()}`, baseUnit: ONE_PIECE })),
  });
  await db.pool.query('VACUUM ANALYZE stock_movement');
  await touch();
  const after = new Date().toISOString();
  const timesAt = async (instant: string): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < READINGS; i++) {
      const response = await timedRequest(`${service.baseUrl}/v1/stock?sku=${sku}&at=${encodeURIComponent(instant)}`, {
        method: 'GET',
        headers: { authorization },
      });
      if (response.status !== 200) throw new Error(`scenario 20: at=${instant} answered ${response.status}`);
      times.push(response.ms);
    }
    return times;
  };
  const early = await timesAt(before);
  const late = await timesAt(after);
  const earlyP50 = median(early);
  const lateP50 = median(late);
  return {
    id: 20,
    title: `GET /v1/stock?at= on a Product with ${formatNumber(LEDGER_ROWS)} ledger rows`,
    service: {
      label: `at an instant before all ${formatNumber(LEDGER_ROWS)} rows`,
      throughput: 1000 / earlyP50,
      unit: 'req/s',
      p50Ms: earlyP50,
    },
    extra: [{ label: 'at an instant after them', throughput: 1000 / lateP50, unit: 'req/s', p50Ms: lateP50 }],
    targets: [],
    details: { ledgerRows: LEDGER_ROWS, earlyMs: early, lateMs: late },
    notes: [
      `p50 ${formatNumber(earlyP50, 1)} ms with every row after the instant, ${formatNumber(lateP50, 1)} ms with none ` +
        `(${READINGS} readings each, one at a time).`,
    ],
  };
}
