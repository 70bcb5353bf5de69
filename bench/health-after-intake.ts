import os from 'node:os';
import { withTransaction } from '../src/db/tx.js';
import { selectBacklog } from '../src/events/sql.js';
import { freePort } from '../test/support/ports.js';
import { openBenchDatabase } from './database.js';
import { timedRequest } from './http.js';
import { bearerToken, JWT_SECRET } from './load.js';
import { installCleanupHandlers, onCleanup, runToExit, stopProcess } from './processes.js';
import { INTAKE_PRODUCT_PREFIX, INTAKE_PRODUCTS, intakePieces } from './scenario-14-intake.js';
import { describeMove, moveAndWait, openSkuStream, seedMoveStock, type MoveAfterIntake } from './move-after-intake.js';
import { postNdjson } from './scenario-7-import.js';
import { seedMasterData, seedProducts, settle } from './seed.js';
import { freezeBuild, startService } from './service.js';

/**
 * Issue 37: how long `/actuator/health` takes during and after one streamed stock intake of BENCH_INTAKE_UNITS
 * (1,000,000) units, on the built service with AMQP_URL set, so that health reads the event backlog too. The
 * broker's port is closed: nothing is published, the backlog stays whole, and the machine does not also carry a
 * million publishes. `/actuator/health/liveness`, which asks no database, is probed beside it: its time is the
 * service's event loop and HTTP, the rest of health's is the database. Issue 33 item 4 in the same run: a
 * `sku=` SSE reader of another Product is open throughout, and a move of that Product follows the 201 at once.
 * One measurement, not a scenario of the run (scenario 14 reports the move too): `npx tsx
 * bench/health-after-intake.ts` (BENCH_DATABASE_URL as for the run). Prints the figures RELIABILITY.md quotes.
 */
const UNITS = Number(process.env.BENCH_INTAKE_UNITS ?? 1_000_000);
const PROBE_EVERY_MS = 100;
// After numbering has caught up, health is watched this much longer.
const AFTER_MS = 30_000;
const EXCHANGE = 'bench-health-after-intake';
const HEALTH = '/actuator/health';
const LIVENESS = '/actuator/health/liveness';

type Phase = 'intake' | 'numbering' | 'after';

interface Probe {
  readonly path: string;
  readonly phase: Phase;
  readonly ms: number;
  readonly status: number;
}

function summary(probes: readonly Probe[]): string {
  const times = probes.map((probe) => probe.ms).sort((a, b) => a - b);
  if (times.length === 0) return 'no probes';
  const at = (share: number): string => times[Math.min(times.length - 1, Math.floor(share * times.length))]!.toFixed(1);
  const failed = probes.filter((probe) => probe.status !== 200).length;
  return `${times.length} probes, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${times.at(-1)!.toFixed(1)} ms, ${failed} not 200`;
}

const load = (): string =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

async function main(): Promise<number> {
  const db = await openBenchDatabase(process.env.BENCH_DATABASE_URL);
  await seedMasterData(db.pool);
  await seedProducts(db.pool, INTAKE_PRODUCT_PREFIX, 1, INTAKE_PRODUCTS);
  await seedMoveStock(db.pool);
  await settle(db.pool);
  await freezeBuild();
  const service = await startService({
    databaseUrl: db.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: false,
    name: 'health-after-intake',
    env: { AMQP_URL: `amqp://guest:guest@127.0.0.1:${await freePort()}`, AMQP_EXCHANGE: EXCHANGE },
  });
  onCleanup('the service', () => stopProcess(service.process));

  const probes: Probe[] = [];
  let phase: Phase = 'intake';
  let probing = true;
  const probe = async (path: string): Promise<void> => {
    while (probing) {
      const started = performance.now();
      const answer = await timedRequest(`${service.baseUrl}${path}`, { method: 'GET', headers: {} });
      probes.push({ path, phase, ms: answer.ms, status: answer.status });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_EVERY_MS - (performance.now() - started))));
    }
  };
  const prober = Promise.all([probe(HEALTH), probe(LIVENESS)]);
  const authorization = bearerToken();
  const stream = await openSkuStream(service.baseUrl, authorization);
  onCleanup('the event stream', async () => stream.close());

  console.log(`load average at the start: ${load()}`);
  const ctx = { db, service, authorization };
  // The move is sent at once; its event is awaited beside the rest of the run.
  let moved: Promise<MoveAfterIntake> | undefined;
  const intake = await postNdjson(ctx, '/v1/packaging-units', intakePieces('HI', UNITS), 'bench-health-after-intake', {
    onCreated: async () => {
      moved = moveAndWait(ctx, stream);
    },
  });
  console.log(
    `intake of ${UNITS} units: 201 after ${(intake.ms / 1000).toFixed(1)} s, ${intake.events} events; load ${load()}`,
  );
  const backlogMs = async (): Promise<string> => {
    const times: number[] = [];
    for (let n = 0; n < 5; n++) {
      const started = performance.now();
      await withTransaction(db.pool, (tx) => selectBacklog(tx, EXCHANGE), { readOnly: true });
      times.push(performance.now() - started);
    }
    return times.map((ms) => ms.toFixed(1)).join(', ');
  };
  console.log(`health's backlog statement alone right after the intake: ${await backlogMs()} ms`);

  phase = 'numbering';
  const numberingStarted = performance.now();
  for (;;) {
    const { rows } = await db.pool.query<{ done: boolean }>(
      'SELECT NOT EXISTS (SELECT FROM event_outbox WHERE position IS NULL) AS done',
    );
    if (rows[0]!.done) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.log(`numbered ${((performance.now() - numberingStarted) / 1000).toFixed(1)} s after the 201; load ${load()}`);
  console.log(describeMove(await moved!));
  stream.close();
  phase = 'after';
  await new Promise((resolve) => setTimeout(resolve, AFTER_MS));
  probing = false;
  await prober;
  console.log(`health's backlog statement alone at the end: ${await backlogMs()} ms`);
  for (const path of [HEALTH, LIVENESS]) {
    for (const each of ['intake', 'numbering', 'after'] as const) {
      console.log(`${path} ${each}: ${summary(probes.filter((probe) => probe.path === path && probe.phase === each))}`);
    }
  }
  console.log(`load average at the end: ${load()}`);
  return 0;
}

installCleanupHandlers();
runToExit(main, 'health after intake');
