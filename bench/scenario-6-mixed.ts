import { pick, runLoad, warmUp, type LoadOptions, type PlannedRequest } from './load.js';
import { step } from './progress.js';
import { SERVICE_APPLICATION } from './service.js';
import { formatNumber, measurementOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { allocationBody, allocationTally } from './scenario-4-allocation.js';
import { productSku, type StockShape } from './seed.js';
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

/** A quantity move of 1-3 PC between the two LoadUnits of one mixed Product, either way. */
function mixedMoveRequest(): PlannedRequest {
  const product = 1 + Math.floor(Math.random() * MIXED_PRODUCTS);
  const [from, to] = Math.random() < 0.5 ? [product, product + MIXED_PRODUCTS] : [product + MIXED_PRODUCTS, product];
  return {
    method: 'PUT',
    path: `/v1/transport-units/${productSku('TM', from)}/load-units/1/packaging-units`,
    body: JSON.stringify({
      product: { sku: productSku(MIXED_PREFIX, product) },
      quantity: {
        unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'],
        magnitude: 1 + Math.floor(Math.random() * 3),
      },
      targetTransportUnitBK: productSku('TM', to),
      targetLoadUnitPosition: '1',
    }),
    kind: 'move',
  };
}

/**
 * The mixed workload's requests: 35 % products by SKU (of the `readProducts` seeded as P-*), 35 % units by pKey,
 * 20 % moves, 10 % allocations of 1-3 PC of a mixed Product. The soak runs the same.
 */
export function mixedRequests(readProducts: number, unitKeys: readonly string[]): () => PlannedRequest {
  return () => {
    const dice = Math.random();
    if (dice < 0.35) {
      const sku = productSku('P', 1 + Math.floor(Math.random() * readProducts));
      return { path: `/v1/products?sku=${sku}`, kind: 'read product' };
    }
    if (dice < 0.7) return { path: `/v1/packaging-units/${pick(unitKeys)}`, kind: 'read unit' };
    if (dice < 0.9) return mixedMoveRequest();
    const pieces = 1 + Math.floor(Math.random() * 3);
    const sku = productSku(MIXED_PREFIX, 1 + Math.floor(Math.random() * MIXED_PRODUCTS));
    return { method: 'POST', path: '/allocation/transport-units', body: allocationBody(sku, pieces), kind: 'allocate' };
  };
}

/**
 * Scenario 6: 70 % reads (products by SKU, units by pKey), 20 % quantity moves between the two LoadUnits of a
 * mixed Product, 10 % allocations of mixed Products, for the mixed duration. Every 5xx, connection error or
 * unexpected status is an error; afterwards the reservation and ledger invariants of the mixed Products.
 */
export async function mixedWorkload(ctx: BenchContext, unitKeys: readonly string[]): Promise<ScenarioResult> {
  const { config, service, db, authorization } = ctx;
  step(`scenario 6: mixed workload for ${config.mixedDuration} s`);
  const tally = allocationTally();
  const next = mixedRequests(config.products, unitKeys);
  const run: LoadOptions = {
    label: 'scenario 6 service',
    baseUrl: service.baseUrl,
    connections: config.connections,
    seconds: config.mixedDuration,
    headers: { authorization },
    next,
    rssPid: service.process.pid,
    database: { pool: db.pool, applicationName: SERVICE_APPLICATION },
  };
  await warmUp(run, config.warmup);
  const measured = await runLoad({
    ...run,
    onBody: (kind, status, body) => kind === 'allocate' && tally.record(status, body),
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const violations = [
    ...(await reservationViolations(db.pool, MIXED_PREFIX)),
    ...(await ledgerViolations(db.pool, MIXED_PREFIX)),
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
  const targets: TargetCheck[] = [
    {
      target: 'zero errors',
      actual:
        errors === 0
          ? '0'
          : `${errors} (5xx: ${serverErrors}, connection: ${measured.connectionErrors}, unexpected: ${JSON.stringify(unexpected)})`,
      met: errors === 0,
    },
    {
      target: `p99 < ${MAX_P99_MS} ms`,
      actual: `${formatNumber(measured.p99Ms)} ms`,
      met: measured.p99Ms < MAX_P99_MS,
    },
    {
      target: 'stock invariants hold',
      actual: violations.length === 0 ? 'reservations, ledger and answers agree' : violations[0]!,
      met: violations.length === 0,
    },
  ];
  return {
    id: 6,
    title: `Mixed workload (70 % reads, 20 % moves, 10 % allocations), ${config.mixedDuration} s`,
    service: measurementOf('service', measured),
    targets,
    details: {
      service: measured,
      errors,
      serverErrors,
      unexpected,
      violations,
      allocations: { reservations: tally.byReservation.size, allocatedPieces: tally.allocated(), empty: tally.empty() },
    },
    notes: Object.entries(measured.latencyByKind).map(
      ([kind, latency]) =>
        `${kind}: ${latency.count.toLocaleString('en-US')} answers, p50 ${formatNumber(latency.p50Ms)} ms, p99 ${formatNumber(latency.p99Ms)} ms, statuses ${JSON.stringify(measured.statusesByKind[kind] ?? {})}`,
    ),
  };
}
