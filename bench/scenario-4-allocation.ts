import { runLoad, warmUp, type LoadOptions } from './load.js';
import { runPgbench } from './pgbench.js';
import { step } from './progress.js';
import { CEILING_APPLICATION, SERVICE_APPLICATION } from './service.js';
import { measurementOf, ratioOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { productSku, type StockShape } from './seed.js';
import { countStatements, statementNote } from './statements.js';
import { reservationMismatches, reservationViolations, reservedTotal, stockTotals } from './stock-checks.js';

const MIN_RATIO = 0.5;
export const ALLOCATION_PREFIX = 'A';
const UNITS_PER_PRODUCT = 100;
const UNITS_PER_LOAD_UNIT = 10;
/** Pieces in each unit of the allocation stock. */
export const ALLOCATION_UNIT_PIECES = 10;

/**
 * 100 units per Product in LoadUnits of ten, 10 PC each, expiry dates spread so FEFO has an order to keep; named
 * for scenario 4 unless other prefixes are given.
 */
export function allocationStock(
  units: number,
  naming: Pick<StockShape, 'productPrefix' | 'tuPrefix'> = { productPrefix: ALLOCATION_PREFIX, tuPrefix: 'TA' },
): { products: number; shape: StockShape } {
  const products = Math.max(1, Math.round(units / UNITS_PER_PRODUCT));
  return {
    products,
    shape: {
      ...naming,
      products,
      loadUnits: Math.max(1, Math.round(units / UNITS_PER_LOAD_UNIT)),
      unitsPerLoadUnit: UNITS_PER_LOAD_UNIT,
      unitQuantity: ALLOCATION_UNIT_PIECES,
      expiryDays: 60,
    },
  };
}

export function allocationBody(sku: string, pieces: number, fields: Record<string, string> = {}): string {
  return JSON.stringify({
    sku,
    qty: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: pieces },
    ...fields,
  });
}

/** Issue 25: the same allocations tied to an order line and expiring in a week, stored with the reservation. */
function reservationFields(): Record<string, string> {
  return {
    externalRef: `order-${Math.floor(Math.random() * 1e9)}/line-1`,
    expiresAt: new Date(Date.now() + 7 * 24 * 3_600_000).toISOString(),
  };
}

/** What an allocation with D32's fields costs against one without, in throughput and CPU per allocation. */
const WITH_FIELDS_TOLERANCE = 0.1;

export interface AllocationTally {
  record(status: number, body: string): void;
  /** PC allocated per reservation id, as the answers said. */
  readonly byReservation: Map<string, number>;
  allocated(): number;
  empty(): number;
}

/** Adds up what 200 answers allocated (PC, the requested unit), by reservation id, and counts empty answers. */
export function allocationTally(): AllocationTally {
  const byReservation = new Map<string, number>();
  let empty = 0;
  return {
    byReservation,
    record(status, body) {
      if (status !== 200) return;
      const results = JSON.parse(body) as { qtyAllocated: { magnitude: number }; reservationId: string }[];
      if (results.length === 0) empty++;
      for (const result of results) {
        byReservation.set(
          result.reservationId,
          (byReservation.get(result.reservationId) ?? 0) + Number(result.qtyAllocated.magnitude),
        );
      }
    },
    allocated: () => [...byReservation.values()].reduce((sum, amount) => sum + amount, 0),
    empty: () => empty,
  };
}

/**
 * Scenario 4: POST /allocation/transport-units from 32 concurrent clients over the allocation Products
 * (1-4 PC each, often across two units), then the over-reservation check; pgbench TPC-B-like as the ceiling.
 */
export async function allocation(ctx: BenchContext, products: number): Promise<ScenarioResult> {
  const { config, service, db, authorization } = ctx;
  step(`scenario 4: allocations from ${config.allocationClients} clients on ${config.allocationUnits} units`);
  const tally = allocationTally();
  const run: LoadOptions = {
    label: 'scenario 4 service',
    baseUrl: service.baseUrl,
    connections: config.allocationClients,
    seconds: config.duration,
    headers: { authorization },
    next: () => ({
      method: 'POST',
      path: '/allocation/transport-units',
      body: allocationBody(
        productSku(ALLOCATION_PREFIX, 1 + Math.floor(Math.random() * products)),
        1 + Math.floor(Math.random() * 4),
      ),
      kind: 'allocate',
    }),
    rssPid: service.process.pid,
    database: { pool: db.pool, applicationName: SERVICE_APPLICATION },
  };
  await warmUp(run, config.warmup);
  const reservedBefore = await reservedTotal(db.pool, ALLOCATION_PREFIX);
  const counting = await countStatements(db.pool);
  const measured = await runLoad({ ...run, onBody: (_kind, status, body) => tally.record(status, body) });
  // Requests cut off by the end of the run finish on the server; wait for them before checking.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const statements = await counting.stop(measured.statuses['200'] ?? 0);
  const withFields = await runLoad({
    ...run,
    label: 'scenario 4 service, externalRef and expiresAt set',
    next: () => ({
      ...run.next(),
      body: allocationBody(
        productSku(ALLOCATION_PREFIX, 1 + Math.floor(Math.random() * products)),
        1 + Math.floor(Math.random() * 4),
        reservationFields(),
      ),
    }),
    onBody: (_kind, status, body) => tally.record(status, body),
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const reservedAfter = await reservedTotal(db.pool, ALLOCATION_PREFIX);
  const mismatches = await reservationMismatches(db.pool, tally.byReservation);
  // Every unit in the database, not only the ones allocated from.
  const violations = await reservationViolations(db.pool);
  const totals = await stockTotals(db.pool, ALLOCATION_PREFIX);

  if (!ctx.pgbench) throw new Error('scenario 4 needs the pgbench database');
  const pgbench = await runPgbench({
    database: ctx.pgbench,
    clients: config.allocationClients,
    threads: 2,
    seconds: config.duration,
  });

  const httpTpcb = await runLoad({
    label: 'scenario 4 bare Express 5 + pg, TPC-B per request',
    baseUrl: ctx.ceiling.baseUrl,
    connections: config.allocationClients,
    seconds: config.duration,
    next: () => ({ method: 'POST', path: '/tpcb', kind: 'tpcb' }),
    rssPid: ctx.ceiling.process.pid,
    database: { pool: db.pool, applicationName: CEILING_APPLICATION },
  });

  const ok = measured.statuses['200'] ?? 0;
  const failures = measured.completed - ok + measured.connectionErrors;
  const allocationsPerSecond = (ok - tally.empty()) / measured.seconds;
  const ratio = ratioOf(allocationsPerSecond, pgbench.tps) ?? 0;
  const reservedDelta = reservedAfter - reservedBefore;
  const withFieldsPerSecond = (withFields.statuses['200'] ?? 0) / withFields.seconds;
  const withFieldsRatio = ratioOf(withFieldsPerSecond, ok / measured.seconds) ?? 0;
  const targets: TargetCheck[] = [
    { target: `≥ ${MIN_RATIO} × pgbench TPS`, actual: `${ratio.toFixed(2)} ×`, met: ratio >= MIN_RATIO },
    {
      target: 'nothing over-reserved',
      actual: violations.length === 0 ? 'reserved ≤ quantity and = active reservations on every unit' : violations[0]!,
      met: violations.length === 0,
    },
    {
      target: 'each answered reservation stored as answered',
      actual:
        mismatches.length === 0
          ? `${tally.byReservation.size} reservations, ${tally.allocated()} PC, all as answered`
          : mismatches[0]!,
      met: mismatches.length === 0,
    },
    { target: 'every answer 200', actual: `${failures} not 200`, met: failures === 0 },
    {
      target: `with externalRef and expiresAt ≥ ${1 - WITH_FIELDS_TOLERANCE} × without (answers/s)`,
      actual: `${withFieldsRatio.toFixed(2)} ×`,
      met: withFieldsRatio >= 1 - WITH_FIELDS_TOLERANCE,
    },
  ];
  return {
    id: 4,
    title: `POST /allocation/transport-units, ${config.allocationClients} clients on ${config.allocationUnits.toLocaleString('en-US')} units`,
    service: measurementOf('service', measured, 'allocations/s', allocationsPerSecond),
    ceiling: {
      label: `pgbench TPC-B-like -s ${pgbench.scale} -c ${config.allocationClients} -j 2`,
      throughput: pgbench.tps,
      unit: 'TPS',
      p50Ms: pgbench.latencyAverageMs,
      cpu: pgbench.cpu,
    },
    ratio,
    ratioBasis: 'allocations/s ÷ TPS',
    targets,
    details: {
      service: measured,
      withFields,
      emptyAnswers: tally.empty(),
      reservedBefore,
      reservedAfter,
      allocatedInAnswers: tally.allocated(),
      reservedDuringRun: reservedDelta,
      mismatches,
      violations,
      stockAfter: totals,
      statements,
      pgbench,
      ceiling: httpTpcb,
    },
    extra: [
      measurementOf('bare Express 5 + pg, pgbench’s TPC-B transaction per HTTP request (pool of 10)', httpTpcb, 'TPS'),
      measurementOf(
        'the service, externalRef and expiresAt set (answers/s)',
        withFields,
        'answers/s',
        withFieldsPerSecond,
      ),
    ],
    notes: [
      'The pgbench p50 column holds its average latency (pgbench reports no percentiles).',
      statementNote(statements, 'allocation'),
      `The same TPC-B transaction over HTTP through a bare Express 5 app reaches ${ratioOf(httpTpcb.requestsPerSecond, pgbench.tps)?.toFixed(2) ?? '–'} × pgbench: the share of the gap that HTTP, Express and node-postgres cost before any service logic.`,
    ],
  };
}
