import os from 'node:os';
import { watchCpu } from './cpu-share.js';
import { JWT_SECRET } from './load.js';
import { stopProcess } from './processes.js';
import { step } from './progress.js';
import { formatNumber, type BenchContext, type ScenarioResult } from './results.js';
import { ALLOCATION_UNIT_PIECES, allocationStock } from './scenario-4-allocation.js';
import type { StockShape } from './seed.js';
import { startService, type RunningServer } from './service.js';

const RESERVATIONS = Number(process.env.BENCH_EXPIRY_RESERVATIONS ?? 50_000);
const BOUND_SECONDS = 10;
const INSTANCES = 3;
const EXPIRY_PREFIX = 'XP';

/**
 * The scenario's own stock, scenario 4's shape (units of 10 PC) with a piece for each reservation: on scenario 4's
 * stock the count depended on what scenarios 4 and 23 had taken (44,505 at 20:10, 14,560 at 22:27 on a faster host).
 */
export function expiryStock(): { products: number; shape: StockShape } {
  return allocationStock(Math.ceil(RESERVATIONS / ALLOCATION_UNIT_PIECES), {
    productPrefix: EXPIRY_PREFIX,
    tuPrefix: 'TXP',
  });
}

interface Round {
  readonly reservations: number;
  readonly seconds: number;
  readonly rows: number;
  readonly distinct: number;
  readonly events: number;
  readonly eventKeys: number;
  readonly conserved: boolean;
  /**
   * CPU the round used, from the UPDATE that made them due to the last check: the service instances' (all of them)
   * and the embedded PostgreSQL's, per expiry; what the rest of the machine used, in percent of one core; the load
   * average at both ends. Unlike the seconds, the CPU per expiry does not depend on what else the machine runs.
   */
  readonly cpu?: {
    readonly serviceMsPerExpiry: number;
    readonly postgresMsPerExpiry: number;
    readonly otherPercent: number;
    readonly load: readonly [number, number];
  };
}

/**
 * Scenario 21 (issue 35, D40): RESERVATIONS reservations of 1 PC each, written with SQL on the pieces of its own
 * stock (expiryStock), all falling due at one instant; the running service's expiry work
 * ends them, first on the one instance, then again with two more instances on the same database. Each round is
 * measured from the instant they fall due (or were all there, if later) to the last EXPIRE ledger row; then each is
 * checked ended exactly once and the units' reserved amounts back where they were.
 */
export async function massExpiry(ctx: BenchContext): Promise<ScenarioResult> {
  const one = await expireRound(ctx, [ctx.service.process.pid]);
  const others: RunningServer[] = [];
  let three: Round;
  try {
    for (let n = 2; n <= INSTANCES; n++) {
      others.push(
        await startService({
          databaseUrl: ctx.db.url,
          jwtSecret: JWT_SECRET,
          cpuProfile: false,
          main: ctx.config.serviceMain,
          env: ctx.config.serviceEnv,
          name: `service-expiry-${n}`,
        }),
      );
    }
    three = await expireRound(ctx, [ctx.service.process.pid, ...others.map((other) => other.process.pid)]);
  } finally {
    await Promise.all(others.map((other) => stopProcess(other.process)));
  }
  const rounds = [
    { instances: 1, round: one },
    { instances: INSTANCES, round: three },
  ];
  return {
    id: 21,
    title: `Mass expiry: ${one.reservations.toLocaleString('en-US')} reservations due at one instant, one instance and ${INSTANCES}`,
    service: {
      label: 'expiries per second on one instance, from the due instant to the last EXPIRE ledger row',
      throughput: one.seconds > 0 ? one.reservations / one.seconds : 0,
      unit: 'expiries/s',
    },
    targets: rounds.flatMap(({ instances, round }) => [
      {
        target: `${instances} instance(s): all ended within ${BOUND_SECONDS} s of their expiry`,
        actual: `${formatNumber(round.seconds, 1)} s, ${formatNumber(round.seconds > 0 ? round.reservations / round.seconds : 0)} expiries/s`,
        met: round.seconds < BOUND_SECONDS,
      },
      {
        target: `${instances} instance(s): each ended exactly once (EXPIRE ledger rows and expired events); reserved amounts as before`,
        actual: `${round.rows} rows for ${round.distinct} reservations, ${round.events} events for ${round.eventKeys}; reserved ${round.conserved ? 'as before' : 'changed'}`,
        met:
          round.rows === round.reservations &&
          round.distinct === round.reservations &&
          round.events === round.reservations &&
          round.eventKeys === round.reservations &&
          round.conserved,
      },
    ]),
    details: { oneInstance: one, threeInstances: three },
    notes: [
      ...rounds.flatMap(({ instances, round }) =>
        round.cpu
          ? [
              `${instances} instance(s): CPU per expiry ${formatNumber(round.cpu.serviceMsPerExpiry, 3)} ms in the service, ${formatNumber(round.cpu.postgresMsPerExpiry, 3)} ms in PostgreSQL; the rest of the machine used ${formatNumber(round.cpu.otherPercent)} % of a core meanwhile; load average ${round.cpu.load[0].toFixed(2)} → ${round.cpu.load[1].toFixed(2)}.`,
            ]
          : [],
      ),
      `Seeded with SQL on the scenario's own stock (products ${EXPIRY_PREFIX}-…, units of ${ALLOCATION_UNIT_PIECES} PC), ${formatNumber(one.reservations)} reservations of 1 PC, all due at the same instant; ended by the service's own expiry work (src/reservations/expiry.ts), then the same again with ${INSTANCES - 1} more instances of the service on the database.`,
    ],
  };
}

async function expireRound(ctx: BenchContext, pids: readonly (number | undefined)[]): Promise<Round> {
  const instances = pids.length;
  const { pool } = ctx.db;
  step(
    `scenario 21: ${RESERVATIONS.toLocaleString('en-US')} reservations falling due at once, ${instances} instance(s)`,
  );
  const reservedBefore = await reservedOfExpiryStock(ctx);
  const { rows } = await pool.query<{ id: string }>(
    `WITH placed AS (
       SELECT gen_random_uuid() AS reservation_id, pu.id, pu.p_key, pu.product_id
         FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
        CROSS JOIN LATERAL generate_series(1, floor(pu.qty_base - pu.reserved_base)::int)
        WHERE p.sku LIKE $1 || '-%'
        LIMIT $2
     ), life AS (
       INSERT INTO reservation_life (reservation_id, product_id, qty_base, expires_at)
       SELECT reservation_id, product_id, 1, now() + interval '1 day' FROM placed
       RETURNING reservation_id
     ), part AS (
       INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id)
       SELECT reservation_id, id, p_key, 1, 'bench', 'scenario-21' FROM placed
     ), reserved AS (
       UPDATE packaging_unit pu SET reserved_base = pu.reserved_base + c.n
         FROM (SELECT id, count(*) AS n FROM placed GROUP BY id) c WHERE pu.id = c.id
     )
     SELECT reservation_id AS id FROM life`,
    [EXPIRY_PREFIX, RESERVATIONS],
  );
  const ids = rows.map((row) => row.id);
  const loadAtStart = os.loadavg()[0] ?? 0;
  // A watch per instance, each with it as its target; PostgreSQL's CPU and the rest of the machine's from the first.
  const watches = pids.map((pid) => watchCpu(pid));
  const watchStarted = performance.now();
  const due = await pool.query<{ dueAt: Date; dueAtExact: string }>(
    `WITH due AS (UPDATE reservation_life SET expires_at = now() + interval '1 second'
                   WHERE reservation_id = ANY($1::uuid[]) RETURNING expires_at)
     SELECT max(expires_at) AS "dueAt", max(expires_at)::text AS "dueAtExact" FROM due`,
    [ids],
  );
  const dueAt = Math.max(due.rows[0]!.dueAt.getTime(), Date.now());
  const deadline = Date.now() + 300_000;
  // Done when nothing due by that instant is left ACTIVE: one probe of the expiry index, as the work itself walks
  // it. Asked by the 50,000 ids every 100 ms, each poll sent 1.9 MB and matched every id (0.34-0.48 s a poll in
  // psql on 100,000 rows at load 24): the runner took a share of the CPU of the round it timed.
  for (;;) {
    const { rows: left } = await pool.query<{ left: boolean }>(
      // As text: a Date would cut the instant to milliseconds and leave out what fell due within the last one.
      "SELECT EXISTS (SELECT FROM reservation_life WHERE state = 'ACTIVE' AND expires_at <= $1::timestamptz) AS left",
      [due.rows[0]!.dueAtExact],
    );
    if (!left[0]!.left || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const watchedSeconds = (performance.now() - watchStarted) / 1000;
  const shares = watches.map((watch) => watch.stop());
  const msPerExpiry = (percent: number): number => ((percent / 100) * watchedSeconds * 1000) / Math.max(1, ids.length);
  const cpu = shares.every((share) => share !== undefined)
    ? {
        serviceMsPerExpiry: msPerExpiry(shares.reduce((sum, share) => sum + share!.target, 0)),
        postgresMsPerExpiry: msPerExpiry(shares[0]!.postgres),
        otherPercent: shares[0]!.other,
        load: [loadAtStart, os.loadavg()[0] ?? 0] as const,
      }
    : undefined;
  const { rows: outcome } = await pool.query<{
    lastAt: Date;
    rows: number;
    distinct: number;
    events: number;
    eventKeys: number;
  }>(
    `SELECT (SELECT max(occurred_at) FROM stock_movement WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS "lastAt",
            (SELECT count(*)::int FROM stock_movement WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS rows,
            (SELECT count(DISTINCT reservation_id)::int FROM stock_movement
              WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS distinct,
            (SELECT count(*)::int FROM event_outbox
              WHERE type = 'allocation.event.expired' AND resource_key = ANY($1::text[])) AS events,
            (SELECT count(DISTINCT resource_key)::int FROM event_outbox
              WHERE type = 'allocation.event.expired' AND resource_key = ANY($1::text[])) AS "eventKeys"`,
    [ids],
  );
  const result = outcome[0]!;
  return {
    reservations: ids.length,
    seconds: ((result.lastAt?.getTime() ?? Date.now()) - dueAt) / 1000,
    rows: result.rows,
    distinct: result.distinct,
    events: result.events,
    eventKeys: result.eventKeys,
    conserved: (await reservedOfExpiryStock(ctx)) === reservedBefore,
    ...(cpu ? { cpu } : {}),
  };
}

async function reservedOfExpiryStock(ctx: BenchContext): Promise<string> {
  const { rows } = await ctx.db.pool.query<{ reserved: string }>(
    `SELECT COALESCE(sum(pu.reserved_base), 0)::text AS reserved
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku LIKE $1 || '-%'`,
    [EXPIRY_PREFIX],
  );
  return rows[0]!.reserved;
}
