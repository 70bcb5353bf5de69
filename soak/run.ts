import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describeMachine } from '../bench/machine.js';
import { installCleanupHandlers, onCleanup, onStopping, runToExit } from '../bench/processes.js';
import { step } from '../bench/progress.js';
import { BROKER_URL } from '../test/support/broker.js';
import { consumeExchange, deleteExchange, type EventConsumer } from '../test/support/event-consumer.js';
import { startPgBouncer } from '../test/support/pgbouncer.js';
import { PROJECT_ROOT } from '../test/support/service-process.js';
import { bearer, signToken } from '../test/support/tokens.js';
import { sleep } from '../test/reliability/harness.js';
import { endChecks, mixedProductTotals, readYourWritesStored } from './checks.js';
import { startSoakCluster, waitUntilAllAnswer } from './cluster.js';
import { loadSoakConfig } from './config.js';
import {
  startFailoverSoakDatabase,
  startReplicasSoakDatabase,
  startReplicatedSoakDatabase,
  startSoakDatabase,
  type SoakDatabase,
} from './database.js';
import { eventChecks, lastEventSeq } from './events.js';
import { scheduleFaults } from './faults.js';
import { clock, count, describeExit, nonZero } from './format.js';
import {
  failuresOf,
  readYourWritesFailures,
  soakSection,
  summaryLines,
  writeReliabilitySection,
  writeResults,
  type SoakReport,
} from './report.js';
import { ERROR_CLASSES, soakTally, type ErrorCounts } from './tally.js';
import { startTraffic } from './traffic.js';
import { mixedRequests } from '../bench/scenario-6-mixed.js';
import { PROBE_PATH, READ_PRODUCTS, seedSoakStock } from './workload.js';
import { startReadYourWrites } from './read-your-writes.js';

const INSTANCES = 3;
/** The `replicas` topology's replicas behind the balancer (issue 37). */
const REPLICAS = 2;
/** Concurrent write-then-read loops of the read-your-writes probe, beside the load. */
const READ_YOUR_WRITES_LOOPS = 2;
/** Server connections of the PgBouncer topology, for 3 × (DB_POOL_MAX 10 + 3) client connections. */
const PGBOUNCER_SERVER_CONNECTIONS = 10;
/**
 * As README's Behind PgBouncer advises: while PostgreSQL restarts, a query waits at most 5 s for a server connection
 * (DB_CONNECT_TIMEOUT_MS's default) and then fails (a 503), and PgBouncer tries to log in again every second.
 */
const PGBOUNCER_SETTINGS = { query_wait_timeout: 5, server_login_retry: 1 };
const PROGRESS_EVERY_MS = 10_000;
const FINAL_RECOVERY_LIMIT_MS = 120_000;
/** Instance logs, the PostgreSQL log and the results of runs at other than the default settings. */
const SCRATCH_DIR = path.join(PROJECT_ROOT, 'soak', 'results');
const RESULTS_JSON = path.join(PROJECT_ROOT, 'soak', 'results.json');
const RELIABILITY_MD = path.join(PROJECT_ROOT, 'RELIABILITY.md');

function openPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'inventory-soak' });
  pool.on('error', () => undefined);
  return pool;
}

function outsideFaults(errors: ErrorCounts, during: readonly ErrorCounts[]): ErrorCounts {
  return Object.fromEntries(
    ERROR_CLASSES.map((name) => [name, during.reduce((rest, counts) => rest - counts[name], errors[name])]),
  ) as ErrorCounts;
}

async function main(): Promise<number> {
  installCleanupHandlers();
  const config = loadSoakConfig();
  const durationSeconds = Math.round(config.minutes * 60);
  const loadAverageAtStart = os.loadavg()[0] ?? 0;
  // Only this run's logs: an earlier run may have replaced more instances.
  await rm(SCRATCH_DIR, { recursive: true, force: true });
  await mkdir(SCRATCH_DIR, { recursive: true });
  step(
    `soak: ${config.minutes} min, ${config.connections} connections, a fault every ${config.faultIntervalSeconds} s` +
      (config.full ? '' : ' (not the default settings: RELIABILITY.md and soak/results.json stay as they are)'),
  );

  const failover = config.topology === 'failover' ? await startFailoverSoakDatabase() : undefined;
  const replicas = config.topology === 'replicas' ? await startReplicasSoakDatabase(REPLICAS) : undefined;
  const replicated = config.topology === 'pgbouncer-replica' ? await startReplicatedSoakDatabase() : undefined;
  const restartable =
    failover || replicas
      ? undefined
      : (replicated ?? (await startSoakDatabase(path.join(SCRATCH_DIR, 'postgres.log'))));
  const database: SoakDatabase = failover ?? replicas ?? restartable!;
  const databaseKind = failover
    ? 'a PostgreSQL 15 primary and its synchronous replica behind a TCP forwarder'
    : replicas
      ? `a PostgreSQL 15 primary and ${REPLICAS} streaming replicas behind a round-robin TCP balancer`
      : replicated
        ? 'a PostgreSQL 15 primary and its streaming replica'
        : 'embedded PostgreSQL';
  onCleanup(databaseKind, () => database.remove(), database.removeAtExit);
  let serviceDatabase = { databaseUrl: database.url, environment: {} as Record<string, string> };
  if (config.topology.startsWith('pgbouncer')) {
    const bouncer = await startPgBouncer({
      serverUrl: database.url,
      poolSize: PGBOUNCER_SERVER_CONNECTIONS,
      settings: PGBOUNCER_SETTINGS,
    });
    onCleanup('PgBouncer', () => bouncer.stop(), bouncer.killAtExit);
    const databaseName = new URL(database.url).pathname.slice(1);
    serviceDatabase = {
      databaseUrl: bouncer.urlOf(databaseName),
      environment: {
        DATABASE_POOL_MODE: 'transaction',
        DATABASE_DIRECT_URL: database.url,
        ...(replicated && { DATABASE_READ_URL: replicated.replicaUrl }),
      },
    };
    step(`PgBouncer (transaction mode, ${PGBOUNCER_SERVER_CONNECTIONS} server connections) on port ${bouncer.port}`);
  }
  // Issue 37: the failover and replica topologies relay their events to RabbitMQ, where the soak counts them.
  let events: { consumer: EventConsumer; fromSeq: string } | undefined;
  if (failover || replicas) {
    const exchange = `inventory-soak-${randomUUID()}`;
    const consumer = await consumeExchange(exchange, { declareExchange: true });
    onCleanup('event consumer', async () => {
      await consumer.close();
      await deleteExchange(exchange);
    });
    events = { consumer, fromSeq: '0' };
    serviceDatabase.environment = {
      AMQP_URL: BROKER_URL,
      AMQP_EXCHANGE: exchange,
      ...(replicas && { DATABASE_READ_URL: replicas.readUrl }),
    };
  }
  step(`${databaseKind} ${database.serverVersion} up; starting ${INSTANCES} instances on it…`);
  const authorization = bearer(signToken({ sub: 'soak' }, { expiresIn: durationSeconds + 3600 }));
  const cluster = await startSoakCluster({
    ...serviceDatabase,
    instances: INSTANCES,
    authorization,
    probePath: PROBE_PATH,
  });
  onCleanup(
    'service instances',
    async () => {
      await cluster.stop();
    },
    cluster.killAtExit,
  );

  const seedPool = openPool(database.url);
  const unitKeys = await seedSoakStock(seedPool);
  const seededTotals = await mixedProductTotals(seedPool);
  if (events) events.fromSeq = await lastEventSeq(seedPool);
  await seedPool.end();

  const startedAt = Date.now();
  const elapsed = (): string => clock((Date.now() - startedAt) / 1000);
  const log = (line: string): void => step(`[${new Date().toISOString().slice(11, 19)} +${elapsed()}] ${line}`);
  const tally = soakTally(startedAt);
  step(`mixed workload through the proxy ${cluster.url} for ${clock(durationSeconds)}…`);
  const traffic = startTraffic({
    url: cluster.url,
    connections: config.connections,
    seconds: durationSeconds,
    authorization,
    next: mixedRequests(READ_PRODUCTS, unitKeys),
    tally,
  });
  onStopping(() => traffic.stop());
  const readYourWrites = startReadYourWrites({
    urls: () => cluster.instanceUrls(),
    authorization,
    loops: READ_YOUR_WRITES_LOOPS,
  });
  const faults = scheduleFaults({
    topology: config.topology,
    database: restartable,
    failover,
    replicas,
    cluster,
    tally,
    startedAt,
    intervalSeconds: config.faultIntervalSeconds,
    durationSeconds,
    log,
    replica: replicated,
  });
  const progress = setInterval(
    () =>
      log(
        `${count(tally.answered())} answers, errors: ${nonZero(tally.errors)}; last fault: ${faults.latest()}; ` +
          `load ${(os.loadavg()[0] ?? 0).toFixed(1)}`,
      ),
    PROGRESS_EVERY_MS,
  );
  const trafficResult = await traffic.finished.finally(() => clearInterval(progress));
  await faults.finish();
  await readYourWrites.stop();
  const loadAverageAtEnd = os.loadavg()[0] ?? 0;

  log('load finished; waiting until every instance answers, then checking the database…');
  const finalRecovery = await waitUntilAllAnswer(cluster, FINAL_RECOVERY_LIMIT_MS);
  // Requests cut off by the end of the run may still be finishing on the server.
  await sleep(1000);
  const checkPool = openPool(database.url);
  const checks = [
    ...(await endChecks(checkPool, tally, seededTotals)),
    await readYourWritesStored(checkPool, readYourWrites.tally.created),
    ...(events ? await eventChecks(checkPool, events.consumer, events.fromSeq) : []),
  ];
  await checkPool.end();
  const readsByPool = replicas ? await cluster.readsByPool().catch(() => undefined) : undefined;
  const finalExits = (await cluster.stop()).map(describeExit);
  const logs = await cluster.writeLogs(SCRATCH_DIR);
  await database.remove();

  const serviceErrorLines: Record<string, number> = {};
  for (const { errorsByMessage } of logs) {
    for (const [message, n] of Object.entries(errorsByMessage)) {
      serviceErrorLines[message] = (serviceErrorLines[message] ?? 0) + n;
    }
  }
  const failures = [
    ...failuresOf(tally.errors, faults.records, checks, finalExits),
    ...readYourWritesFailures(readYourWrites.tally),
  ];
  if (finalRecovery === undefined) failures.push('the instances did not all answer after the load');
  const report: SoakReport = {
    startedAt: new Date(startedAt).toISOString(),
    minutes: config.minutes,
    connections: config.connections,
    faultIntervalSeconds: config.faultIntervalSeconds,
    instances: INSTANCES,
    topology: config.topology,
    machine: describeMachine(
      database.serverVersion,
      config.topology === 'direct' || config.topology === 'pgbouncer' ? 'embedded' : 'server',
      loadAverageAtStart,
    ),
    loadAverageAtEnd,
    traffic: { ...trafficResult, answered: tally.answered() },
    statusesByKind: tally.statusesByKind,
    errors: tally.errors,
    errorsOutsideFaults: outsideFaults(
      tally.errors,
      faults.records.map((fault) => fault.errorsDuring),
    ),
    connectionErrorCodes: tally.connectionErrorCodes,
    faults: faults.records,
    checks,
    finalExits,
    serviceErrorLines,
    unexpectedAnswers: tally.samples,
    readYourWrites: readYourWrites.tally,
    replicaConnections: replicas?.readConnections,
    readsByPool,
    failures,
  };

  const resultsFile = config.full ? RESULTS_JSON : path.join(SCRATCH_DIR, 'latest.json');
  await writeResults(resultsFile, report);
  if (config.full) await writeReliabilitySection(RELIABILITY_MD, soakSection(report));
  const written = config.full ? `${resultsFile} and ${RELIABILITY_MD}` : resultsFile;
  const footer = `wrote ${written}; instance and PostgreSQL logs in ${SCRATCH_DIR}`;
  process.stdout.write(['', ...summaryLines(report), footer, ''].join('\n'));
  return failures.length === 0 ? 0 : 1;
}

runToExit(main, 'soak');
