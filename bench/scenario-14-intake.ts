import os from 'node:os';
import type pg from 'pg';
import { step } from './progress.js';
import { settleBetweenRuns, waitForNumbering } from './database.js';
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
 * Removes what one of the compared intakes wrote, once its events are numbered: its ledger rows (by its request
 * id), its units, LoadUnits and TransportUnits (by the TransportUnits' prefix). The ledger is append-only and its
 * trigger refuses a DELETE, so that statement runs with the session's triggers off (`session_replication_role`,
 * which needs the bench's superuser); the units are deleted with their triggers, so the stock levels lose what the
 * intake added. Its events stay: positions are gapless (D29), and the feed and the relay read a page as the next
 * positions, so a hole of a million would end every later scenario's relay at it (scenarios 9 and 16 of the run of
 * 2026-11-29 13:58 waited for it in vain).
 */
async function removeIntake(pool: pg.Pool, prefix: string, requestId: string): Promise<void> {
  await waitForNumbering(pool);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query('DELETE FROM stock_movement WHERE request_id = $1', [requestId]);
    await client.query('SET LOCAL session_replication_role = origin');
    const transportUnits = `SELECT id FROM transport_unit WHERE bk LIKE $1`;
    const loadUnits = `SELECT id FROM load_unit WHERE transport_unit_id IN (${transportUnits})`;
    await client.query(`DELETE FROM packaging_unit WHERE load_unit_id IN (${loadUnits})`, [`${prefix}-%`]);
    await client.query(`DELETE FROM load_unit WHERE transport_unit_id IN (${transportUnits})`, [`${prefix}-%`]);
    await client.query('DELETE FROM transport_unit WHERE bk LIKE $1', [`${prefix}-%`]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Scenario 14 (issue 26): one streamed NDJSON stock intake (POST /v1/packaging-units) of BENCH_INTAKE_UNITS units
 * across a TransportUnit per 100 units, each created with its LoadUnit on the spot; units/s against a raw COPY
 * of the same unit rows in the same run.
 */
export async function stockIntake(ctx: BenchContext): Promise<ScenarioResult> {
  const count = ctx.config.intakeUnits;
  const pool = ctx.db.pool;
  step(`scenario 14: NDJSON stock intake of ${formatNumber(count)} units`);
  await postIntake(ctx, 'IW', 1000, 'bench-s14-warmup');
  // Issue 34: the intake with an Idempotency-Key is compared with the one without, and both must start from the
  // same tables. The second of two used to go into tables holding the first's million units, ledger rows and
  // events, and PostgreSQL's CPU for that second million differed by up to a third between runs (the ratio swung
  // from 1.045× to 0.85×, key second both times). So the first run's rows are removed before the second, and each
  // run starts settled: every event numbered, VACUUM ANALYZE (the removed rows' space free again, fresh
  // statistics), and a CHECKPOINT, so that neither run writes out the dirty pages of what came before it.
  // BENCH_KEYED_FIRST swaps the order. Issue 33 item 4: during the intake without a key a reader of the moved
  // Product's events is open throughout, and the move follows the 201 at once.
  // The 1-minute load average as each run starts, in the order they run.
  const startLoads: number[] = [];
  const settle = async () => {
    await settleBetweenRuns(pool);
    await pool.query('CHECKPOINT');
    startLoads.push(os.loadavg()[0]!);
  };
  const plain = async () => {
    await settle();
    const stream = await openSkuStream(ctx.service.baseUrl, ctx.authorization);
    try {
      return await postIntake(ctx, 'IT', count, 'bench-s14', { onCreated: () => moveAndWait(ctx, stream) });
    } finally {
      stream.close();
    }
  };
  const withKey = async () => {
    step(`scenario 14: the same intake with an Idempotency-Key`);
    await settle();
    return postIntake(ctx, 'IK', count, 'bench-s14-keyed', { idempotencyKey: `bench-s14-${Date.now()}` });
  };
  const keyedFirst = ctx.config.keyedFirst;
  let run: Awaited<ReturnType<typeof plain>>;
  let keyed: Awaited<ReturnType<typeof withKey>>;
  let runLoad: number;
  let keyedLoad: number;
  if (keyedFirst) {
    keyed = await withKey();
    keyedLoad = os.loadavg()[0]!;
    step('scenario 14: removing the keyed intake before the one without');
    await removeIntake(pool, 'IK', 'bench-s14-keyed');
    run = await plain();
    runLoad = os.loadavg()[0]!;
  } else {
    run = await plain();
    runLoad = os.loadavg()[0]!;
    step('scenario 14: removing the intake without a key before the keyed one');
    await removeIntake(pool, 'IT', 'bench-s14');
    keyed = await withKey();
    keyedLoad = os.loadavg()[0]!;
  }
  // The raw COPY goes into the LoadUnits of the intake that was kept, the second.
  const keptPrefix = keyedFirst ? 'IT' : 'IK';
  const move = run.then!;
  step(`scenario 14: ${describeMove(move)}`);
  const keyedRatio = run.ms / keyed.ms;
  const copyMs = await rawCopy(pool, keptPrefix, count);
  const perSecond = (ms: number): number => (count / ms) * 1000;
  const throughput = perSecond(run.ms);
  const ceiling = perSecond(copyMs);
  const ratio = ratioOf(throughput, ceiling) ?? 0;
  // The shares are percent of one core over the run: CPU ms per unit of the service and of PostgreSQL.
  const cpuMsPerUnit = (percent: number | undefined, ms: number): number | undefined =>
    percent === undefined ? undefined : Number((((percent / 100) * ms) / count).toFixed(4));
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
      keyedFirst,
      // The 1-minute load average as each run started and ended: the machine may be shared.
      startLoadAverage: Number(startLoads[keyedFirst ? 1 : 0]!.toFixed(2)),
      keyedStartLoadAverage: Number(startLoads[keyedFirst ? 0 : 1]!.toFixed(2)),
      loadAverage: Number(runLoad.toFixed(2)),
      keyedLoadAverage: Number(keyedLoad.toFixed(2)),
      serviceCpuMsPerUnit: cpuMsPerUnit(run.cpu?.target, run.ms),
      postgresCpuMsPerUnit: cpuMsPerUnit(run.cpu?.postgres, run.ms),
      keyedServiceCpuMsPerUnit: cpuMsPerUnit(keyed.cpu?.target, keyed.ms),
      keyedPostgresCpuMsPerUnit: cpuMsPerUnit(keyed.cpu?.postgres, keyed.ms),
      moveAfterIntake: move,
    },
    notes: [
      'One run; p50 and p99 are that run. The body is generated while it is sent, as a file is read.',
      `Events written in the intake's transaction: ${formatNumber(run.events)} (a pu.event.created per unit and an ` +
        'lu.event.created per LoadUnit), with a CREATE ledger row per unit.',
      `Issue 33 item 4: a ${'`'}GET /v1/events?sku=${'`'} stream of another Product was open during the intake; a quantity ` +
        `move of that Product was sent as soon as the 201 came: ${describeMove(move)}. The numbering instant is the ` +
        'commit boundary the sequencer recorded with the run that numbered it.',
      `With and without an Idempotency-Key (${keyedFirst ? 'keyed first' : 'keyed second'}): both intakes start ` +
        "from the same tables. The first one's units, LoadUnits, TransportUnits and ledger rows are removed before " +
        'the second (its events stay: positions are gapless), and each starts after its events are numbered, ' +
        'VACUUM ANALYZE and a CHECKPOINT.',
      'The raw COPY writes the unit rows only, into the LoadUnits the second intake created: no validation, no ' +
        'staging table, no TransportUnits or LoadUnits, no ledger rows, no events.',
    ],
  };
}
