import type pg from 'pg';
import { pick, runLoad, warmUp, type Answer, type LoadOptions, type LoadResult, type PlannedRequest } from './load.js';
import { step } from './progress.js';
import { SERVICE_APPLICATION, type RunningServer } from './service.js';
import { formatNumber, measurementOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { allocationBody, allocationTally } from './scenario-4-allocation.js';
import { productSku, type StockShape } from './seed.js';
import { countStatements, statementNote, type StatementProfile } from './statements.js';
import { ledgerViolations, reservationMismatches, reservationViolations } from './stock-checks.js';

const MAX_P99_MS = 100;
export const MIXED_PREFIX = 'M';
const MIXED_PRODUCTS = 200;

/** Two TransportUnits per Product (TM-p and TM-(p+200)), one LoadUnit each with 5 units of 100 PC. */
export const mixedStock: StockShape = {
  productPrefix: MIXED_PREFIX,
  products: MIXED_PRODUCTS,
  tuPrefix: 'TM',
  loadUnits: 2 * MIXED_PRODUCTS,
  unitsPerLoadUnit: 5,
  unitQuantity: 100,
};

export type MixedRequestKind = 'read product' | 'read unit' | 'move' | 'allocate';

/** What each kind of request may answer. 404/409 are what moves provoke by design (source empty or all reserved). */
export const MIXED_EXPECTED_STATUSES: Record<MixedRequestKind, readonly number[]> = {
  'read product': [200],
  'read unit': [200],
  move: [204, 404, 409],
  allocate: [200],
};

/** A quantity move of 1-3 PC between the two LoadUnits of one Product of the stock, either way. */
function mixedMoveRequest(stock: StockShape): PlannedRequest {
  const product = 1 + Math.floor(Math.random() * stock.products);
  const [from, to] = Math.random() < 0.5 ? [product, product + stock.products] : [product + stock.products, product];
  return {
    method: 'PUT',
    path: `/v1/transport-units/${productSku(stock.tuPrefix, from)}/load-units/1/packaging-units`,
    body: JSON.stringify({
      product: { sku: productSku(stock.productPrefix, product) },
      quantity: {
        unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'],
        magnitude: 1 + Math.floor(Math.random() * 3),
      },
      targetTransportUnitBK: productSku(stock.tuPrefix, to),
      targetLoadUnitPosition: '1',
    }),
    kind: 'move',
  };
}

/**
 * The mixed workload's requests: 35 % products by SKU (of the `readProducts` seeded as P-*), 35 % units by pKey,
 * 20 % moves, 10 % allocations of 1-3 PC of a Product of `stock` (shaped like `mixedStock`). The soak runs the same.
 */
export function mixedRequests(
  readProducts: number,
  unitKeys: readonly string[],
  stock: StockShape = mixedStock,
): () => PlannedRequest {
  return () => {
    const dice = Math.random();
    if (dice < 0.35) {
      const sku = productSku('P', 1 + Math.floor(Math.random() * readProducts));
      return { path: `/v1/products?sku=${sku}`, kind: 'read product' };
    }
    if (dice < 0.7) return { path: `/v1/packaging-units/${pick(unitKeys)}`, kind: 'read unit' };
    if (dice < 0.9) return mixedMoveRequest(stock);
    const pieces = 1 + Math.floor(Math.random() * 3);
    const sku = productSku(stock.productPrefix, 1 + Math.floor(Math.random() * stock.products));
    return { method: 'POST', path: '/allocation/transport-units', body: allocationBody(sku, pieces), kind: 'allocate' };
  };
}

export interface MixedRunOptions {
  readonly label: string;
  readonly service: RunningServer;
  readonly stock: StockShape;
  readonly requestIdPrefix?: string;
  readonly onAnswer?: (answer: Answer) => void;
  /** Called as the measured run starts; what it returns, as it ends (e.g. a CPU watch). */
  readonly onMeasured?: () => () => void;
}

/** One measured run of the mixed workload and the checks after it. */
export interface MixedRun {
  readonly measured: LoadResult;
  readonly errors: number;
  readonly serverErrors: number;
  readonly unexpected: Record<string, Record<string, number>>;
  readonly violations: readonly string[];
  readonly allocations: { reservations: number; allocatedPieces: number; empty: number };
  /** Rows the run's requests added to the outbox (events), warm-up excluded. */
  readonly eventsWritten: number;
  /** The statements of the measured run per answered request of any kind (pg_stat_statements). */
  readonly statements: StatementProfile | undefined;
}

async function outboxHead(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ head: string }>('SELECT COALESCE(max(seq), 0)::text AS head FROM event_outbox');
  return Number(rows[0]?.head ?? 0);
}

/**
 * A warm-up and a measured run of the mixed workload against `service` on `stock`; then every 5xx, connection
 * error or unexpected status counted as an error, and the reservation and ledger invariants of the stock.
 */
export async function runMixed(
  ctx: BenchContext,
  unitKeys: readonly string[],
  options: MixedRunOptions,
): Promise<MixedRun> {
  const { config, db, authorization } = ctx;
  const { stock } = options;
  const tally = allocationTally();
  const run: LoadOptions = {
    label: options.label,
    baseUrl: options.service.baseUrl,
    connections: config.connections,
    seconds: config.mixedDuration,
    headers: { authorization },
    next: mixedRequests(config.products, unitKeys, stock),
    rssPid: options.service.process.pid,
    database: { pool: db.pool, applicationName: SERVICE_APPLICATION },
  };
  await warmUp(run, config.warmup);
  const headBefore = await outboxHead(db.pool);
  const counting = await countStatements(db.pool);
  const ended = options.onMeasured?.();
  const measured = await runLoad({
    ...run,
    onBody: (kind, status, body) => kind === 'allocate' && tally.record(status, body),
    requestIdPrefix: options.requestIdPrefix,
    onAnswer: options.onAnswer,
  });
  ended?.();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const statements = await counting.stop(Object.values(measured.statuses).reduce((sum, count) => sum + count, 0));
  const eventsWritten = (await outboxHead(db.pool)) - headBefore;
  const violations = [
    ...(await reservationViolations(db.pool, stock.productPrefix)),
    ...(await ledgerViolations(db.pool, stock.productPrefix)),
    ...(await reservationMismatches(db.pool, tally.byReservation)),
  ];

  const unexpected: Record<string, Record<string, number>> = {};
  let errors = measured.connectionErrors;
  for (const [kind, statuses] of Object.entries(measured.statusesByKind)) {
    for (const [status, count] of Object.entries(statuses)) {
      if (MIXED_EXPECTED_STATUSES[kind as MixedRequestKind]?.includes(Number(status))) continue;
      (unexpected[kind] ??= {})[status] = count;
      errors += count;
    }
  }
  const serverErrors = Object.entries(measured.statuses)
    .filter(([status]) => status.startsWith('5'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    measured,
    errors,
    serverErrors,
    unexpected,
    violations,
    allocations: { reservations: tally.byReservation.size, allocatedPieces: tally.allocated(), empty: tally.empty() },
    eventsWritten,
    statements,
  };
}

/** Zero errors and the stock invariants, as every mixed run must keep them. */
export function mixedChecks(run: MixedRun): TargetCheck[] {
  const { errors, serverErrors, unexpected, violations, measured } = run;
  return [
    {
      target: 'zero errors',
      actual:
        errors === 0
          ? '0'
          : `${errors} (5xx: ${serverErrors}, connection: ${measured.connectionErrors}, unexpected: ${JSON.stringify(unexpected)})`,
      met: errors === 0,
    },
    {
      target: 'stock invariants hold',
      actual: violations.length === 0 ? 'reservations, ledger and answers agree' : violations[0]!,
      met: violations.length === 0,
    },
  ];
}

/** Per kind of request: answers, p50/p99 and statuses. */
export function mixedNotes(measured: LoadResult): string[] {
  return Object.entries(measured.latencyByKind).map(
    ([kind, latency]) =>
      `${kind}: ${latency.count.toLocaleString('en-US')} answers, p50 ${formatNumber(latency.p50Ms)} ms, p99 ${formatNumber(latency.p99Ms)} ms, statuses ${JSON.stringify(measured.statusesByKind[kind] ?? {})}`,
  );
}

/**
 * Scenario 6: 70 % reads (products by SKU, units by pKey), 20 % quantity moves between the two LoadUnits of a
 * mixed Product, 10 % allocations of mixed Products, for the mixed duration, against the service without
 * AMQP_URL (events are written to the outbox and numbered, nothing is published). Scenario 8 is its events-on
 * twin.
 */
export async function mixedWorkload(ctx: BenchContext, unitKeys: readonly string[]): Promise<ScenarioResult> {
  const { config, service } = ctx;
  step(`scenario 6: mixed workload for ${config.mixedDuration} s`);
  const run = await runMixed(ctx, unitKeys, { label: 'scenario 6 service', service, stock: mixedStock });
  const { measured } = run;
  const [errorCheck, stockCheck] = mixedChecks(run);
  const targets: TargetCheck[] = [
    errorCheck!,
    {
      target: `p99 < ${MAX_P99_MS} ms`,
      actual: `${formatNumber(measured.p99Ms)} ms`,
      met: measured.p99Ms < MAX_P99_MS,
    },
    stockCheck!,
  ];
  return {
    id: 6,
    title: `Mixed workload (70 % reads, 20 % moves, 10 % allocations), ${config.mixedDuration} s`,
    service: measurementOf('service', measured),
    targets,
    details: {
      service: measured,
      errors: run.errors,
      serverErrors: run.serverErrors,
      unexpected: run.unexpected,
      violations: run.violations,
      allocations: run.allocations,
      eventsWritten: run.eventsWritten,
      statements: run.statements,
    },
    notes: [
      ...mixedNotes(measured),
      `events written to the outbox by the measured requests: ${run.eventsWritten.toLocaleString('en-US')} (no AMQP_URL: none published)`,
      statementNote(run.statements, 'request of the mix'),
    ],
  };
}
