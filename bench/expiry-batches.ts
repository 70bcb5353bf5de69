/**
 * Where a mass expiry's time goes, in one process, without HTTP: the expiry work's batches (src/reservations/expiry.ts:
 * two side by side, 1,000 reservations each) run against a fresh database on BENCH_DATABASE_URL's server (or an
 * embedded PostgreSQL), seeded as scenario 21 seeds it. Reports wall time, this process's CPU, the PostgreSQL
 * backends' CPU, the time per statement (the first 60 characters of its text), and how many batches were tried
 * again (deadlocks, serialization failures).
 *
 *   EXPIRY_RESERVATIONS=50000 EXPIRY_PER_UNIT=10 npx tsx bench/expiry-batches.ts
 *
 * EXPIRY_PER_UNIT: reservations per unit at most (10: every unit of the allocation stock filled, as a fresh run
 * seeds; 1: one reservation per unit). EXPIRY_ROUNDS: rounds on the same
 * database, each seeding and ending the reservations again.
 *
 * EXPIRY_NOT_DUE: reservations expiring in a week made first and analysed before the due ones are written, as
 * a full run leaves them (scenario 4's allocations, then a VACUUM ANALYZE): the statistics then say nothing is
 * due. EXPIRY_EXPLAIN=1: before the timed round, one batch in a transaction rolled back, with each statement's
 * plan (auto_explain, actual rows and buffers) printed.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { withTransaction, type Tx } from '../src/db/tx.js';
import { expireDue } from '../src/reservations/service.js';
import { openBenchDatabase } from './database.js';
import { installCleanupHandlers, runToExit } from './processes.js';
import { ALLOCATION_PREFIX, allocationStock } from './scenario-4-allocation.js';
import { seedMasterData, seedProducts, seedStock, settle } from './seed.js';

const RESERVATIONS = Number(process.env.EXPIRY_RESERVATIONS ?? 50_000);
const PER_UNIT = Number(process.env.EXPIRY_PER_UNIT ?? 10);
const ROUNDS = Number(process.env.EXPIRY_ROUNDS ?? 1);
const BATCHES_AT_ONCE = Number(process.env.EXPIRY_BATCHES_AT_ONCE ?? 2);
const NOT_DUE = Number(process.env.EXPIRY_NOT_DUE ?? 0);
const EXPLAIN = process.env.EXPIRY_EXPLAIN === '1';
const LIMIT = 1000;
const statementTimes = new Map<string, { calls: number; ms: number }>();
let attempts = 0;

function timeStatements(): void {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function timed(this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; name?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 60);
    if (key.startsWith('BEGIN')) attempts++;
    const started = performance.now();
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (result && typeof (result as Promise<unknown>).finally === 'function') {
      void (result as Promise<unknown>)
        .finally(() => {
          const entry = statementTimes.get(key) ?? { calls: 0, ms: 0 };
          entry.calls++;
          entry.ms += performance.now() - started;
          statementTimes.set(key, entry);
        })
        .catch(() => undefined);
    }
    return result;
  } as typeof original;
}

function backendTicks(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks;
}

async function seedReservations(pool: pg.Pool, count = RESERVATIONS, expiresIn = '-1 second'): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH placed AS (
       SELECT gen_random_uuid() AS reservation_id, pu.id, pu.p_key, pu.product_id
         FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
        CROSS JOIN LATERAL generate_series(1, least($3::int, floor(pu.qty_base - pu.reserved_base)::int))
        WHERE p.sku LIKE $1 || '%'
        LIMIT $2
     ), life AS (
       INSERT INTO reservation_life (reservation_id, product_id, qty_base, expires_at)
       SELECT reservation_id, product_id, 1, now() + $4::interval FROM placed
       RETURNING reservation_id
     ), part AS (
       INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id)
       SELECT reservation_id, id, p_key, 1, 'bench', 'expiry-batches' FROM placed
     ), reserved AS (
       UPDATE packaging_unit pu SET reserved_base = pu.reserved_base + c.n
         FROM (SELECT id, count(*) AS n FROM placed GROUP BY id) c WHERE pu.id = c.id
     )
     SELECT reservation_id AS id FROM life`,
    [ALLOCATION_PREFIX, count, PER_UNIT, expiresIn],
  );
  return rows.map((row) => row.id);
}

async function main(): Promise<number> {
  installCleanupHandlers();
  const db = await openBenchDatabase(process.env.BENCH_DATABASE_URL?.trim() || undefined);
  await seedMasterData(db.pool);
  const { products, shape } = allocationStock(10_000);
  await seedProducts(db.pool, shape.productPrefix, 1, products);
  await seedStock(db.pool, shape);
  if (NOT_DUE > 0) await seedReservations(db.pool, NOT_DUE, '7 days');
  await settle(db.pool);
  const pool = new pg.Pool({
    connectionString: db.url,
    max: BATCHES_AT_ONCE,
    idleTimeoutMillis: 0,
  });
  // Connections opened now, so their backends can be watched.
  const clients = await Promise.all(Array.from({ length: BATCHES_AT_ONCE }, () => pool.connect()));
  const pids = await Promise.all(
    clients.map(async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid),
  );
  clients.forEach((client) => client.release());
  timeStatements();
  for (let round = 1; round <= ROUNDS; round++) {
    const ids = await seedReservations(db.pool);
    const units = await db.pool.query<{ n: number }>(
      'SELECT count(DISTINCT packaging_unit_id)::int AS n FROM reservation WHERE reservation_id = ANY($1::uuid[])',
      [ids],
    );
    if (EXPLAIN) await explainOneBatch(db.pool);
    statementTimes.clear();
    attempts = 0;
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const cpuBefore = process.cpuUsage();
    const ticksBefore = backendTicks(pids);
    const started = performance.now();
    let ended = 0;
    let batches = 0;
    const actor = { subject: 'system:reservation-expiry', requestId: 'expiry-batches' };
    await Promise.all(
      Array.from({ length: BATCHES_AT_ONCE }, async () => {
        for (;;) {
          const n = await withTransaction(pool, (tx) => expireDue(tx, actor, LIMIT));
          ended += n;
          batches++;
          if (n < LIMIT) break;
        }
      }),
    );
    const wall = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const pgMs = (backendTicks(pids) - ticksBefore) * 10;
    console.log(
      `round ${round}: ${ended} of ${ids.length} ended on ${units.rows[0]!.n} units in ${(wall / 1000).toFixed(2)} s ` +
        `(${batches} batches, ${attempts - batches} tried again), load ${load}; ` +
        `this process ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU, ` +
        `PostgreSQL backends ${pgMs} ms CPU (${(((cpu.user + cpu.system) / 1000 + pgMs) / ended).toFixed(3)} ms per expiry)`,
    );
    for (const [key, { calls, ms }] of [...statementTimes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)) {
      console.log(`  ${ms.toFixed(0).padStart(7)} ms ${String(calls).padStart(5)} × ${key}`);
    }
  }
  await pool.end();
  return 0;
}

/** One batch's statements with their plans as executed (auto_explain sent to this client), then rolled back. */
async function explainOneBatch(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  const plans: string[] = [];
  const onNotice = (notice: { message?: string }): void => void plans.push(notice.message ?? '');
  client.on('notice', onNotice);
  try {
    await client.query('BEGIN');
    await client.query(`LOAD 'auto_explain'`);
    for (const [name, value] of Object.entries({
      log_min_duration: '0',
      log_analyze: 'on',
      log_buffers: 'on',
      log_timing: 'off',
      log_nested_statements: 'on',
      log_level: 'notice',
    })) {
      await client.query(`SELECT set_config('auto_explain.${name}', $1, true)`, [value]);
    }
    plans.length = 0;
    await expireDue(client as Tx, { subject: 'system:reservation-expiry', requestId: 'explain' }, LIMIT);
  } finally {
    await client.query('ROLLBACK');
    client.off('notice', onNotice);
    client.release();
  }
  // Parameters are long arrays: cut to their first 60 characters.
  for (const plan of plans) console.log(plan.replace(/('\{[^}]{60})[^}]*\}'/g, "$1…}'") + '\n');
}

runToExit(main, 'expiry-batches');
