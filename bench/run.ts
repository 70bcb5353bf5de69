import { createReadStream, existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { loadBenchConfig, type BenchConfig } from './config.js';
import { openBenchDatabase, type BenchDatabase } from './database.js';
import { bearerToken, JWT_SECRET } from './load.js';
import { describeMachine } from './machine.js';
import { installCleanupHandlers, runToExit, stopProcess } from './processes.js';
import { step } from './progress.js';
import { initPgbench } from './pgbench.js';
import { printSummary, writeReport, type RunReport } from './report.js';
import type { BenchContext, ScenarioResult } from './results.js';
import { productsBySku } from './scenario-1-products-by-sku.js';
import { UNIT_SAMPLE, unitByPKey } from './scenario-2-unit-by-pkey.js';
import { bulkCreate } from './scenario-3-bulk-create.js';
import { allocation, allocationStock } from './scenario-4-allocation.js';
import { streamProducts } from './scenario-5-stream.js';
import { streamedImport } from './scenario-7-import.js';
import { mixedStock, mixedWorkload } from './scenario-6-mixed.js';
import { eventsMixed, eventsMixedStock } from './scenario-8-events-mixed.js';
import { eventsBulk } from './scenario-9-events-bulk.js';
import { productsBySkuOnWorkers } from './scenario-10-workers.js';
import { productsBySkuWithReplica } from './scenario-11-read-replica.js';
import { hotStock, lockSomeHotLoadUnits, stockLevels } from './scenario-12-stock-levels.js';
import { tracingCost } from './scenario-13-tracing.js';
import { eventStreams } from './scenario-15-event-streams.js';
import { relaySustained } from './scenario-16-relay.js';
import { seedMoveStock } from './move-after-intake.js';
import { INTAKE_PRODUCT_PREFIX, INTAKE_PRODUCTS, stockIntake } from './scenario-14-intake.js';
import { outboxPrune } from './scenario-17-prune.js';
import { numberingBacklog } from './scenario-19-numbering.js';
import { stockAt } from './scenario-20-stock-at.js';
import { expiryStock, massExpiry } from './scenario-21-mass-expiry.js';

import { masterDataBulk } from './scenario-22-master-data-bulk.js';
import { pickStock, picks } from './scenario-23-picks.js';

import { streamsUnderLoad } from './scenario-18-streams-under-load.js';
import { ScenarioSkipped } from './events.js';
import { sampleUnitKeys, seedMasterData, seedProducts, seedStock, settle } from './seed.js';
import { freezeBuild, RESULTS_DIR, serviceLogs, startCeilingApp, startService } from './service.js';

const READ_STOCK_PREFIX = 'TU';
const UNITS_PER_LOAD_UNIT = 10;

const wants = (config: BenchConfig, ...ids: number[]): boolean => ids.some((id) => config.scenarios.includes(id));

/** Everything the selected scenarios need, set-based and outside any timed part. */
async function seed(config: BenchConfig, db: BenchDatabase): Promise<void> {
  await seedMasterData(db.pool);
  if (wants(config, 1, 2, 5, 6, 8, 12, 13, 18)) await seedProducts(db.pool, 'P', 1, config.products);
  if (wants(config, 12)) {
    await seedProducts(db.pool, hotStock.productPrefix, 1, 1);
    await seedStock(db.pool, hotStock);
    await lockSomeHotLoadUnits(db.pool);
  }
  if (wants(config, 2, 6, 8, 18)) {
    await seedStock(db.pool, {
      productPrefix: 'P',
      products: config.products,
      tuPrefix: READ_STOCK_PREFIX,
      loadUnits: Math.ceil(config.units / UNITS_PER_LOAD_UNIT),
      unitsPerLoadUnit: UNITS_PER_LOAD_UNIT,
      unitQuantity: 10,
    });
  }
  if (wants(config, 14)) {
    await seedProducts(db.pool, INTAKE_PRODUCT_PREFIX, 1, INTAKE_PRODUCTS);
    await seedMoveStock(db.pool);
  }
  if (wants(config, 4, 13)) {
    const { products, shape } = allocationStock(config.allocationUnits);
    await seedProducts(db.pool, shape.productPrefix, 1, products);
    await seedStock(db.pool, shape);
  }
  if (wants(config, 21)) {
    const { products, shape } = expiryStock();
    await seedProducts(db.pool, shape.productPrefix, 1, products);
    await seedStock(db.pool, shape);
  }
  if (wants(config, 23)) {
    const { products, shape } = pickStock(config.allocationUnits);
    await seedProducts(db.pool, shape.productPrefix, 1, products);
    await seedStock(db.pool, shape);
  }
  if (wants(config, 6, 18)) {
    await seedProducts(db.pool, mixedStock.productPrefix, 1, mixedStock.products);
    await seedStock(db.pool, mixedStock);
  }
  if (wants(config, 8)) {
    await seedProducts(db.pool, eventsMixedStock.productPrefix, 1, eventsMixedStock.products);
    await seedStock(db.pool, eventsMixedStock);
  }
  await settle(db.pool);
}

/** Lines, errors and size of the logs of every service instance the run started. */
async function logStatistics(files: readonly string[]): Promise<RunReport['serviceLog']> {
  let lines = 0;
  let errorLines = 0;
  let bytes = 0;
  for (const file of new Set(files)) {
    if (!existsSync(file)) continue;
    for await (const line of createInterface({ input: createReadStream(file) })) {
      lines++;
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level !== undefined && Number(level) >= 50) errorLines++;
    }
    bytes += statSync(file).size;
  }
  return { lines, errorLines, bytes, files: [...new Set(files)].map((file) => path.basename(file)) };
}

/** The URL without its password, for the report. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function main(): Promise<number> {
  installCleanupHandlers();
  const started = Date.now();
  const loadAverageAtStart = os.loadavg()[0] ?? 0;
  const config = loadBenchConfig();
  step(`benchmark: ${config.full ? 'full run' : 'smoke run'}, scenarios ${config.scenarios.join(', ')}`);
  // Every instance of the run starts from one copy of the build, whatever a test run does to dist/ meanwhile.
  if (!config.serviceMain) step(`measuring the build copied to ${path.relative(process.cwd(), await freezeBuild())}`);
  const db = await openBenchDatabase(config.databaseUrl);
  step(`database ${db.name} on PostgreSQL ${db.serverVersion} (${db.kind})`);
  await seed(config, db);
  const pgbench = wants(config, 4, 13)
    ? await initPgbench(await db.createDatabase('pgbench'), config.pgbenchScale)
    : undefined;

  const service = await startService({
    databaseUrl: db.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: config.cpuProfile,
    main: config.serviceMain,
    env: config.serviceEnv,
  });
  const ceiling = await startCeilingApp(db.url, config.cpuProfile, pgbench);
  step(`service on ${service.baseUrl} (pid ${service.process.pid}), ceiling app on ${ceiling.baseUrl}`);
  const ctx: BenchContext = { config, db, service, ceiling, authorization: bearerToken(), pgbench };

  const unitKeys = wants(config, 6, 8, 18) ? await sampleUnitKeys(db.pool, READ_STOCK_PREFIX, UNIT_SAMPLE) : [];
  const allocationProducts = allocationStock(config.allocationUnits).products;
  const results: ScenarioResult[] = [];
  const byId = (id: number): ScenarioResult | undefined => results.find((result) => result.id === id);
  // Scenario 5 tops the product table up and scenario 3 adds to it, so they run after those reading it. 8 is
  // 6 with events on, right after it; 9 comes late: it adds products too, and its relay first publishes what
  // scenario 3 left in the outbox, outside its measurement. 17 has a database of its own; last, as the heaviest.
  const plan: [number, () => Promise<ScenarioResult>][] = [
    [1, () => productsBySku(ctx)],
    [12, () => stockLevels(ctx)],
    [10, () => productsBySkuOnWorkers(ctx)],
    [11, () => productsBySkuWithReplica(ctx)],
    [2, () => unitByPKey(ctx, READ_STOCK_PREFIX)],
    [4, () => allocation(ctx, allocationProducts)],
    [13, () => tracingCost(ctx, allocationProducts)],
    [23, () => picks(ctx)],
    [6, () => mixedWorkload(ctx, unitKeys)],
    [8, () => eventsMixed(ctx, unitKeys, byId(6))],
    [5, () => streamProducts(ctx)],
    [3, () => bulkCreate(ctx)],
    [7, () => streamedImport(ctx)],
    [14, () => stockIntake(ctx)],
    [9, () => eventsBulk(ctx)],
    [15, () => eventStreams(ctx)],
    [16, () => relaySustained(ctx)],
    // After 4 and 13, whose stock it reserves and gives back.
    [21, () => massExpiry(ctx)],
    [17, () => outboxPrune(ctx)],
    [20, () => stockAt(ctx)],
    [19, () => numberingBacklog(ctx)],

    [22, () => masterDataBulk(ctx)],

    [18, () => streamsUnderLoad(ctx, unitKeys)],
  ];
  const failures: { id: number; error: string }[] = [];
  const skipped: { id: number; reason: string }[] = [];
  for (const [id, run] of plan) {
    if (!config.scenarios.includes(id)) continue;
    try {
      results.push(await run());
    } catch (error) {
      if (error instanceof ScenarioSkipped) {
        step(error.message);
        skipped.push({ id, reason: error.message });
        continue;
      }
      console.error(`scenario ${id} failed:`, error);
      failures.push({ id, error: (error as Error).message });
    }
  }
  // Stopped before the report: a CPU profile is written when the service exits.
  await Promise.all([stopProcess(service.process), stopProcess(ceiling.process)]);
  if (config.cpuProfile) step(`CPU profiles: ${path.join(RESULTS_DIR, 'profiles')}/ (one folder per process)`);

  const shownConfig = { ...config, databaseUrl: undefined, amqpUrl: withoutPassword(config.amqpUrl) };
  const report: RunReport = {
    startedAt: new Date(started).toISOString(),
    totalSeconds: (Date.now() - started) / 1000,
    full: config.full,
    config: { ...shownConfig, database: db.kind },
    machine: describeMachine(db.serverVersion, db.kind === 'embedded' ? 'embedded' : 'server', loadAverageAtStart),
    scenarios: results.sort((a, b) => a.id - b.id),
    failures,
    skipped,
    serviceLog: await logStatistics(serviceLogs),
  };
  const written = await writeReport(report);
  printSummary(report);
  console.log(
    `\nwrote ${path.relative(process.cwd(), written.markdown)} and ${path.relative(process.cwd(), written.json)}`,
  );
  if (written.recorded.length > 0) {
    console.log(
      `scenarios ${written.recorded.join(', ')} recorded beside the full run: BENCHMARKS.md, bench/results.json`,
    );
  }
  return failures.length === 0 ? 0 : 1;
}

runToExit(main, 'benchmark');
