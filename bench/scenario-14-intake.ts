import type pg from 'pg';
import { step } from './progress.js';
import { settleBetweenRuns } from './database.js';
import { formatNumber, ratioOf, type BenchContext, type ScenarioResult } from './results.js';
import { describeMove, moveAndWait, moveTargets, openSkuStream } from './move-after-intake.js';
import { MIN_KEYED_RATIO, piecesOf, postNdjson, timedCopy } from './scenario-7-import.js';
import { productSku } from './seed.js';

/** The Products the intake's units are of; each TransportUnit's one LoadUnit holds one of them (D17). */
export const INTAKE_PRODUCT_PREFIX = 'IN';
export const INTAKE_PRODUCTS = 100;
/** 1,000,000 units across 10,000 TransportUnits at the issue's size. */
const UNITS_PER_TRANSPORT_UNIT = 100;

const transportUnitOf = (prefix: string, n: number): string =>
  `${prefix}-${String(Math.ceil(n / UNITS_PER_TRANSPORT_UNIT)).padStart(7, '0')}`;
const skuOf = (prefix: string, n: number): string =>
  productSku(INTAKE_PRODUCT_PREFIX, (Math.ceil(n / UNITS_PER_TRANSPORT_UNIT) % INTAKE_PRODUCTS) + 1);

/** The NDJSON lines of the intake: units of 5 PC with a serial number into LoadUnit "1" of their TransportUnit. */
export function intakePieces(prefix: string, count: number): Generator<string> {
  return piecesOf(
    count,
    (n) =>
      `{"transportUnitBK":"${transportUnitOf(prefix, n)}","luPos":"1","loadUnitType":"PALLET",` +
      `"product":{"sku":"${skuOf(prefix, n)}"},` +
      `"quantity":{"unitType":["org.openwms.core.units.api.PieceUnit","PC"],"magnitude":5},"serialNumber":"S${n}"}\n`,
  );
}

function postIntake<Then = undefined>(
  ctx: BenchContext,
  prefix: string,
  count: number,
  requestId: string,
  options: { idempotencyKey?: string; onCreated?: () => Promise<Then> } = {},
) {
  return postNdjson(ctx, '/v1/packaging-units', intakePieces(prefix, count), requestId, options);
}

/**
 * The same unit rows in COPY's text format, straight into packaging_unit, into the LoadUnits the intake created:
 * what a hand-written loader gets, without checks, TransportUnits, LoadUnits, ledger or events.
 */
async function rawCopy(pool: pg.Pool, prefix: string, count: number): Promise<number> {
  const { rows } = await pool.query<{ bk: string; id: string }>(
    `SELECT tu.bk, lu.id::text FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
      WHERE tu.bk LIKE $1`,
    [`${prefix}-%`],
  );
  const loadUnits = new Map(rows.map((row) => [row.bk, row.id]));
  const products = await pool.query<{ sku: string; id: string }>(
    'SELECT sku, id::text FROM product WHERE sku LIKE $1',
    [`${INTAKE_PRODUCT_PREFIX}-%`],
  );
  const productIds = new Map(products.rows.map((row) => [row.sku, row.id]));
  const unitRows = piecesOf(
    count,
    (n) => `${productIds.get(skuOf(prefix, n))}\t5\tPC\t${loadUnits.get(transportUnitOf(prefix, n))}\tS${n}\n`,
  );
  return timedCopy(
    pool,
    'COPY packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id, serial_number) FROM STDIN',
    unitRows,
  );
}

/**
 * Scenario 14 (issue 26): one streamed NDJSON stock intake (POST /v1/packaging-units) of BENCH_INTAKE_UNITS units
 * across a TransportUnit per 100 units, each created with its LoadUnit on the spot; units/s against a raw COPY
 * of the same unit rows in the same run.
 */
export async function stockIntake(ctx: BenchContext): Promise<ScenarioResult> {
  const count = ctx.config.intakeUnits;
  step(`scenario 14: NDJSON stock intake of ${formatNumber(count)} units`);
  await postIntake(ctx, 'IW', 1000, 'bench-s14-warmup');
  // Both runs compared start settled (the run before numbered and vacuumed) and from fresh statistics: without, the
  // second intake's check of mixed LoadUnits once ran for more than 5 minutes.
  await settleBetweenRuns(ctx.db.pool);
  // Issue 33 item 4: a reader of the moved Product's events is open throughout, the move follows the 201 at once.
  const stream = await openSkuStream(ctx.service.baseUrl, ctx.authorization);
  let run;
  try {
    run = await postIntake(ctx, 'IT', count, 'bench-s14', { onCreated: () => moveAndWait(ctx, stream) });
  } finally {
    stream.close();
  }
  const move = run.then!;
  step(`scenario 14: ${describeMove(move)}`);
  step(`scenario 14: the same intake with an Idempotency-Key`);
  await settleBetweenRuns(ctx.db.pool);
  const keyed = await postIntake(ctx, 'IK', count, 'bench-s14-keyed', { idempotencyKey: `bench-s14-${Date.now()}` });
  const keyedRatio = run.ms / keyed.ms;
  const copyMs = await rawCopy(ctx.db.pool, 'IT', count);
  const perSecond = (ms: number): number => (count / ms) * 1000;
  const throughput = perSecond(run.ms);
  const ceiling = perSecond(copyMs);
  const ratio = ratioOf(throughput, ceiling) ?? 0;
  // The shares are percent of one core over the run: CPU ms per unit of the service and of PostgreSQL.
  const cpuMsPerUnit = (percent: number | undefined): number | undefined =>
    percent === undefined ? undefined : Number((((percent / 100) * run.ms) / count).toFixed(4));
  return {
    id: 14,
    title: `Streamed NDJSON stock intake POST /v1/packaging-units, ${formatNumber(count)} units in one request`,
    service: {
      label: 'service',
      throughput,
      unit: 'units/s',
      p50Ms: run.ms,
      p99Ms: run.ms,
      peakRssMb: run.rssMb,
      cpu: run.cpu,
    },
    ceiling: {
      label: 'raw COPY … FROM STDIN into packaging_unit, one transaction',
      throughput: ceiling,
      unit: 'units/s',
      p50Ms: copyMs,
      p99Ms: copyMs,
    },
    extra: [
      {
        label: 'service, with an Idempotency-Key',
        throughput: perSecond(keyed.ms),
        unit: 'units/s',
        p50Ms: keyed.ms,
        p99Ms: keyed.ms,
        peakRssMb: keyed.rssMb,
        cpu: keyed.cpu,
      },
    ],
    ratio,
    ratioBasis: 'units/s',
    targets: [
      {
        target: `with an Idempotency-Key ≥ ${MIN_KEYED_RATIO} × without`,
        actual: `${keyedRatio.toFixed(2)} ×`,
        met: keyedRatio >= MIN_KEYED_RATIO,
      },
      ...moveTargets(move),
    ],
    details: {
      serviceMs: Math.round(run.ms),
      keyedMs: Math.round(keyed.ms),
      rawCopyMs: Math.round(copyMs),
      transportUnits: Math.ceil(count / UNITS_PER_TRANSPORT_UNIT),
      outboxEvents: run.events,
      serviceCpuMsPerUnit: cpuMsPerUnit(run.cpu?.target),
      postgresCpuMsPerUnit: cpuMsPerUnit(run.cpu?.postgres),
      moveAfterIntake: move,
    },
    notes: [
      'One run; p50 and p99 are that run. The body is generated while it is sent, as a file is read.',
      `Events written in the intake's transaction: ${formatNumber(run.events)} (a pu.event.created per unit and an ` +
        'lu.event.created per LoadUnit), with a CREATE ledger row per unit.',
      `Issue 33 item 4: a ${'`'}GET /v1/events?sku=${'`'} stream of another Product was open during the intake; a quantity ` +
        `move of that Product was sent as soon as the 201 came: ${describeMove(move)}. The numbering instant is the ` +
        'commit boundary the sequencer recorded with the run that numbered it.',
      'The raw COPY writes the unit rows only, into the LoadUnits the intake created: no validation, no staging ' +
        'table, no TransportUnits or LoadUnits, no ledger rows, no events.',
    ],
  };
}
