import { runLoad, warmUp, type LoadOptions } from './load.js';
import { step } from './progress.js';
import { SERVICE_APPLICATION } from './service.js';
import { formatNumber, measurementOf, type BenchContext, type ScenarioResult, type TargetCheck } from './results.js';
import { allocationBody, allocationStock } from './scenario-4-allocation.js';
import { LOCATIONS, productSku, SKU_DIGITS, type StockShape } from './seed.js';
import { countStatements, statementNote } from './statements.js';
import { ledgerViolations, reservationViolations, stockLevelViolations, stockTotals } from './stock-checks.js';

// Prefixes of this scenario alone, so a full run's other scenarios never allocate, move or count its stock.
const PICK_PREFIX = 'PK';
const PICK_TU_PREFIX = 'TPK';
const TARGET_TU_PREFIX = 'PKT';
/** A quarter of scenario 4's units: each is reserved whole and gives nine picks, more than a run takes. */
const UNITS_PER_PICK_UNIT = 4;
const RESERVING_CLIENTS = 16;
const PICKED_PC = 1;

/** Scenario 4's shape (10 PC units in LoadUnits of ten), on Products and TransportUnits of its own. */
export function pickStock(allocationUnits: number): { products: number; shape: StockShape } {
  const { products, shape } = allocationStock(Math.max(100, Math.round(allocationUnits / UNITS_PER_PICK_UNIT)));
  return { products, shape: { ...shape, productPrefix: PICK_PREFIX, tuPrefix: PICK_TU_PREFIX } };
}

/** A unit a reservation holds, and how many more 1 PC picks leave part of it behind. */
interface PickSlot {
  readonly reservationId: string;
  readonly pKey: string;
  left: number;
}

/** One reservation per seeded unit (10 PC, a whole fresh unit under FEFO), through the API, unmeasured. */
async function reserveAll(ctx: BenchContext, products: number, unitsPerProduct: number): Promise<string[]> {
  const skus = Array.from({ length: products * unitsPerProduct }, (_, i) =>
    productSku(PICK_PREFIX, 1 + (i % products)),
  );
  const ids: string[] = [];
  let next = 0;
  const client = async (): Promise<void> => {
    while (next < skus.length) {
      const sku = skus[next++]!;
      const response = await fetch(`${ctx.service.baseUrl}/allocation/transport-units`, {
        method: 'POST',
        headers: { authorization: ctx.authorization, 'content-type': 'application/json' },
        body: allocationBody(sku, 10),
      });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`scenario 23: allocation answered ${response.status}: ${body}`);
      const answer = JSON.parse(body) as { reservationId: string }[];
      if (answer[0]) ids.push(answer[0].reservationId);
    }
  };
  await Promise.all(Array.from({ length: RESERVING_CLIENTS }, client));
  return ids;
}

/** The units the reservations hold, each with room for picks that leave at least 1 PC reserved on it. */
async function slotsOf(ctx: BenchContext, reservationIds: readonly string[]): Promise<PickSlot[]> {
  const { rows } = await ctx.db.pool.query<{ reservation_id: string; p_key: string; qty: string }>(
    `SELECT r.reservation_id::text, pu.p_key::text, r.qty_base::text AS qty
       FROM reservation r JOIN packaging_unit pu ON pu.id = r.packaging_unit_id
      WHERE r.reservation_id = ANY($1::uuid[]) AND r.released_at IS NULL AND NOT r.picked
      ORDER BY r.id`,
    [reservationIds],
  );
  return rows
    .map((row) => ({
      reservationId: row.reservation_id,
      pKey: row.p_key,
      left: Math.floor(Number(row.qty) / PICKED_PC) - 1,
    }))
    .filter((slot) => slot.left > 0);
}

/** Per reservation: what it reserved, what its active parts hold, and what of that is picked (PC). */
async function reservationTotals(
  ctx: BenchContext,
  reservationIds: readonly string[],
): Promise<{ notActive: number; partsDiffer: string[]; picked: number }> {
  const { rows } = await ctx.db.pool.query<{
    id: string;
    state: string;
    reserved: string;
    held: string;
    picked: string;
  }>(
    `SELECT rl.reservation_id::text AS id, rl.state, rl.qty_base::text AS reserved,
            COALESCE(sum(r.qty_base) FILTER (WHERE r.released_at IS NULL), 0)::text AS held,
            COALESCE(sum(r.qty_base) FILTER (WHERE r.released_at IS NULL AND r.picked), 0)::text AS picked
       FROM reservation_life rl LEFT JOIN reservation r ON r.reservation_id = rl.reservation_id
      WHERE rl.reservation_id = ANY($1::uuid[])
      GROUP BY rl.reservation_id, rl.state, rl.qty_base`,
    [reservationIds],
  );
  return {
    notActive: rows.filter((row) => row.state !== 'ACTIVE').length + (reservationIds.length - rows.length),
    partsDiffer: rows
      .filter((row) => Number(row.held) !== Number(row.reserved))
      .map((row) => `reservation ${row.id}: reserved ${row.reserved} PC, its active parts hold ${row.held}`)
      .slice(0, 20),
    picked: rows.reduce((sum, row) => sum + Number(row.picked), 0),
  };
}

const pieces = { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: PICKED_PC };

/**
 * Scenario 23 (issue 38 item 3): POST /allocation/reservations/{id}/picks from the allocation clients, 1 PC of a
 * reserved 10 PC unit each; every other pick into a LoadUnit (created by the first pick of its reservation, then
 * existing), the others onto a Location. The reservations are made beforehand and not measured.
 */
export async function picks(ctx: BenchContext): Promise<ScenarioResult> {
  const { config, service, db, authorization } = ctx;
  const { products, shape } = pickStock(config.allocationUnits);
  step(`scenario 23: reserving ${formatNumber(shape.loadUnits * shape.unitsPerLoadUnit)} units for the picks`);
  const reservationIds = await reserveAll(ctx, products, (shape.loadUnits * shape.unitsPerLoadUnit) / products);
  const slots = await slotsOf(ctx, reservationIds);
  if (slots.length === 0) throw new Error('scenario 23: the reservations hold no unit to pick part of');
  const capacity = slots.reduce((sum, slot) => sum + slot.left, 0);
  const before = await stockTotals(db.pool, PICK_PREFIX);

  // Round robin over the slots: concurrent picks land on different reservations, as different orders would.
  let turn = 0;
  let sent = 0;
  let exhausted = 0;
  const run: LoadOptions = {
    label: 'scenario 23 service',
    baseUrl: service.baseUrl,
    connections: config.allocationClients,
    seconds: config.duration,
    headers: { authorization },
    next: () => {
      const index = turn++ % slots.length;
      const slot = slots[index]!;
      if (slot.left > 0) slot.left--;
      else exhausted++;
      sent++;
      const toLoadUnit = index % 2 === 0;
      const target = toLoadUnit
        ? {
            transportUnitBK: `${TARGET_TU_PREFIX}-${String(index + 1).padStart(SKU_DIGITS, '0')}`,
            luPos: '1',
            loadUnitType: 'CRATE',
          }
        : { locationId: `L-${String(1 + Math.floor(Math.random() * LOCATIONS)).padStart(4, '0')}` };
      return {
        method: 'POST',
        path: `/allocation/reservations/${slot.reservationId}/picks`,
        body: JSON.stringify({ pKey: slot.pKey, qty: pieces, target }),
        kind: toLoadUnit ? 'into a LoadUnit' : 'onto a Location',
      };
    },
    rssPid: service.process.pid,
    database: { pool: db.pool, applicationName: SERVICE_APPLICATION },
  };
  // Requests cut off by the end of a run finish on the server; each wait lets them commit before counting.
  const settle = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, 1000));
  await warmUp(run, config.warmup);
  await settle();
  const warmUpSent = sent;
  const pickedBefore = (await reservationTotals(ctx, reservationIds)).picked;
  const counting = await countStatements(db.pool);
  const measured = await runLoad(run);
  await settle();
  const ok = measured.statuses['201'] ?? 0;
  const totals = await reservationTotals(ctx, reservationIds);
  // Divided by the picks committed in the window, those cut off at its end included (1 PC each).
  const committed = (totals.picked - pickedBefore) / PICKED_PC;
  const statements = await counting.stop(committed);

  const after = await stockTotals(db.pool, PICK_PREFIX);
  const violations = [
    ...(await reservationViolations(db.pool, PICK_PREFIX)),
    ...(await ledgerViolations(db.pool, PICK_PREFIX)),
    ...(await stockLevelViolations(db.pool, PICK_PREFIX)),
  ];
  const failures = measured.completed - ok + measured.connectionErrors;
  const picksPerSecond = ok / measured.seconds;
  const cpuMsPerPick = (percent: number | undefined): string =>
    percent === undefined || picksPerSecond <= 0 ? '–' : formatNumber((percent / 100 / picksPerSecond) * 1000, 3);
  const byKind = Object.entries(measured.latencyByKind)
    .map(
      ([kind, l]) =>
        `${kind}: ${formatNumber(l.count)} answers, p50 ${formatNumber(l.p50Ms, 1)} ms, p99 ${formatNumber(l.p99Ms, 1)} ms`,
    )
    .join('; ');
  const conserved = before.quantity === after.quantity && before.reserved === after.reserved;
  const targets: TargetCheck[] = [
    {
      target: 'stock conserved (on hand and reserved of the Products as before the picks)',
      actual: `${formatNumber(before.quantity)} → ${formatNumber(after.quantity)} PC on hand, ${formatNumber(before.reserved)} → ${formatNumber(after.reserved)} PC reserved`,
      met: conserved,
    },
    {
      target: 'reservations consistent (each ACTIVE, its active parts hold what it reserved, units and ledger agree)',
      actual:
        totals.notActive === 0 && totals.partsDiffer.length === 0 && violations.length === 0
          ? `${formatNumber(reservationIds.length)} reservations as reserved, every unit's reservations and ledger as stored`
          : [`${totals.notActive} not ACTIVE`, ...totals.partsDiffer, ...violations].slice(0, 3).join('; '),
      met: totals.notActive === 0 && totals.partsDiffer.length === 0 && violations.length === 0,
    },
    {
      target: 'picked in the database between the 201s answered and the picks sent',
      actual: `${formatNumber(totals.picked)} PC picked; ${formatNumber(ok)} answered 201 in the measured run, ${formatNumber(sent)} sent with the warm-up`,
      met: totals.picked >= ok * PICKED_PC && totals.picked <= sent * PICKED_PC,
    },
    { target: 'every answer 201', actual: `${failures} not 201`, met: failures === 0 },
  ];
  return {
    id: 23,
    title: `POST /allocation/reservations/{id}/picks, ${config.allocationClients} clients, half into a LoadUnit, half onto a Location`,
    service: measurementOf('service', measured, 'picks/s', picksPerSecond),
    targets,
    details: {
      service: measured,
      reservations: reservationIds.length,
      slots: slots.length,
      capacity,
      warmUpSent,
      sent,
      committedInMeasuredRun: committed,
      exhausted,
      stockBefore: before,
      stockAfter: after,
      reservationTotals: totals,
      violations,
      statements,
    },
    notes: [
      `Informational, no target (issue 38 item 3). ${formatNumber(reservationIds.length)} reservations of 10 PC made beforehand, unmeasured; each pick takes ${PICKED_PC} PC of a reserved unit (${formatNumber(capacity)} such picks possible, ${formatNumber(exhausted)} asked beyond that). A LoadUnit target is one TransportUnit per reservation, created by its first pick (loadUnitType given), existing for the later ones.`,
      `By target: ${byKind}.`,
      `CPU per pick: service ${cpuMsPerPick(measured.cpu?.target)} ms, PostgreSQL ${cpuMsPerPick(measured.cpu?.postgres)} ms.`,
      statementNote(statements, 'pick', 'picks committed in it (answered or cut off at its end)'),
    ],
  };
}
