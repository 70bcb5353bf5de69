import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import {
  missingReplicaTools,
  startReplicatedClusters,
  type ReplicatedClusters,
} from '../test/support/replicated-clusters.js';
import { quietLogger } from './database.js';
import { ScenarioSkipped } from './events.js';
import { JWT_SECRET, runLoad, warmUp, type LoadOptions, type LoadResult } from './load.js';
import { onCleanup, stopProcess } from './processes.js';
import { step } from './progress.js';
import { formatNumber, measurementOf, ratioOf, type BenchContext, type ScenarioResult } from './results.js';
import { productSku, seedProducts } from './seed.js';
import { startService, type RunningServer } from './service.js';

const TICKS_PER_SECOND = 100;

/** CPU seconds of a server so far: its postmaster, the backends and helpers it forked, and those it reaped. */
function serverCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) !== postmaster && Number(fields[1]) !== postmaster) continue;
      ticks += [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
    } catch {
      // The process ended while the list was read.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

async function committedTransactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ commits: string }>(
      "SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = 'postgres'",
    );
    return Number(result.rows[0]!.commits);
  } finally {
    await client.end();
  }
}

async function waitForReplay(clusters: ReplicatedClusters): Promise<void> {
  const primary = new pg.Client({ connectionString: clusters.primaryUrl });
  await primary.connect();
  try {
    const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    for (const deadline = Date.now() + 120_000; ;) {
      const [row] = await clusters.onReplica<{ replayed: boolean }>(
        'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS replayed',
        [rows[0]!.lsn],
      );
      if (row?.replayed) return;
      if (Date.now() > deadline) throw new Error('the replica did not replay the seeded products within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await primary.end();
  }
}

/** What one configuration did: its load run and what each server spent on it. */
interface ReplicaRun {
  readonly load: LoadResult;
  readonly primaryCpuSeconds: number;
  readonly replicaCpuSeconds: number;
  readonly primaryCommits: number;
  readonly replicaCommits: number;
  /** The service's own count of the reads it sent to each pool (only with a replica). */
  readonly readsByPool: Record<string, number>;
  readonly loadAverage: readonly [number, number];
}

async function readsByPool(service: RunningServer, authorization: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.baseUrl}/actuator/prometheus`, { headers: { authorization } })).text();
  return Object.fromEntries(
    [...text.matchAll(/^db_reads_total\{pool="(\w+)"\} (\d+)/gm)].map(([, pool, count]) => [pool!, Number(count)]),
  );
}

async function measure(
  bench: BenchContext,
  clusters: ReplicatedClusters,
  name: string,
  env: Record<string, string>,
): Promise<ReplicaRun> {
  const { config, authorization } = bench;
  const service = await startService({
    databaseUrl: clusters.primaryUrl,
    jwtSecret: JWT_SECRET,
    cpuProfile: false,
    main: config.serviceMain,
    env: { ...config.serviceEnv, ...env },
    name,
  });
  try {
    const run: LoadOptions = {
      label: `scenario 11 ${name}`,
      baseUrl: service.baseUrl,
      connections: config.connections,
      seconds: config.duration,
      headers: { authorization },
      next: () => ({ path: `/v1/products?sku=${productSku('P', 1 + Math.floor(Math.random() * config.products))}` }),
      rssPid: service.process.pid,
    };
    await warmUp(run, config.warmup);
    const loadBefore = os.loadavg()[0] ?? 0;
    const readsBefore = await readsByPool(service, authorization);
    const [primaryCpu, replicaCpu] = [serverCpuSeconds(clusters.primaryDir), serverCpuSeconds(clusters.replicaDir)];
    const [primaryCommits, replicaCommits] = await Promise.all([
      committedTransactions(clusters.primaryUrl),
      committedTransactions(clusters.replicaUrl),
    ]);
    const load = await runLoad(run);
    const [primaryCommitsAfter, replicaCommitsAfter] = await Promise.all([
      committedTransactions(clusters.primaryUrl),
      committedTransactions(clusters.replicaUrl),
    ]);
    const readsAfter = await readsByPool(service, authorization);
    return {
      load,
      primaryCpuSeconds: serverCpuSeconds(clusters.primaryDir) - primaryCpu,
      replicaCpuSeconds: serverCpuSeconds(clusters.replicaDir) - replicaCpu,
      primaryCommits: primaryCommitsAfter - primaryCommits,
      replicaCommits: replicaCommitsAfter - replicaCommits,
      readsByPool: Object.fromEntries(
        Object.entries(readsAfter).map(([pool, count]) => [pool, count - (readsBefore[pool] ?? 0)]),
      ),
      loadAverage: [loadBefore, os.loadavg()[0] ?? 0],
    };
  } finally {
    await stopProcess(service.process);
  }
}

/** An amount per read: CPU seconds become milliseconds per read, transactions stay a count per read. */
function perRead(amount: number, run: ReplicaRun, scale: number, digits: number): string {
  return formatNumber((amount / Math.max(1, run.load.completed)) * scale, digits);
}

function describeRun(label: string, run: ReplicaRun): string {
  const server = (name: string, cpuSeconds: number, commits: number): string =>
    `${name} ${formatNumber(cpuSeconds, 2)} CPU s (${perRead(cpuSeconds, run, 1000, 3)} ms per read) and ` +
    `${perRead(commits, run, 1, 3)} transactions per read`;
  return (
    `${label}: ${formatNumber(run.load.requestsPerSecond)} req/s, p99 ${formatNumber(run.load.p99Ms, 1)} ms; ` +
    `${server('primary', run.primaryCpuSeconds, run.primaryCommits)}; ` +
    `${server('replica', run.replicaCpuSeconds, run.replicaCommits)}; ` +
    `load average ${run.loadAverage.map((value) => value.toFixed(2)).join(' → ')}`
  );
}

/**
 * Scenario 11 (issue 17): scenario 1's lookups by SKU against a PostgreSQL 15 primary, first with every read on it,
 * then with DATABASE_READ_URL on a streaming replica of it (made by pg_basebackup -R on this machine). On one machine
 * both servers share its cores, so the figure to read is what the replica takes off the primary: its CPU and its
 * transactions per read.
 */
export async function productsBySkuWithReplica(bench: BenchContext): Promise<ScenarioResult> {
  const missing = missingReplicaTools();
  if (missing) throw new ScenarioSkipped(`scenario 11 skipped: ${missing}`);
  const products = bench.config.products;
  step('scenario 11: a PostgreSQL 15 primary and its streaming replica (pg_basebackup -R)');
  const clusters = await startReplicatedClusters();
  onCleanup('scenario 11 clusters', () => clusters.destroy());
  try {
    const pool = new pg.Pool({ connectionString: clusters.primaryUrl, max: 2 });
    try {
      await migrate(pool, quietLogger());
      await seedProducts(pool, 'P', 1, products);
      await pool.query('VACUUM ANALYZE product');
    } finally {
      await pool.end();
    }
    await waitForReplay(clusters);

    step('scenario 11: every read on the primary');
    const primaryOnly = await measure(bench, clusters, 'service-primary-only', {});
    step('scenario 11: reads on the replica (DATABASE_READ_URL)');
    const withReplica = await measure(bench, clusters, 'service-with-replica', {
      DATABASE_READ_URL: clusters.replicaUrl,
    });

    const answeredOk = (run: ReplicaRun): boolean =>
      run.load.connectionErrors === 0 && Object.keys(run.load.statuses).every((status) => status === '200');
    const onReplica = withReplica.readsByPool.replica ?? 0;
    const readShare = onReplica / Math.max(1, onReplica + (withReplica.readsByPool.primary ?? 0));
    return {
      id: 11,
      title: `GET /v1/products?sku= on ${products.toLocaleString('en-US')} products, with a read replica against without`,
      service: measurementOf('service, DATABASE_READ_URL on the replica', withReplica.load),
      ceiling: measurementOf('the same service, every read on the primary', primaryOnly.load),
      ratio: ratioOf(withReplica.load.requestsPerSecond, primaryOnly.load.requestsPerSecond),
      ratioBasis: 'req/s with the replica ÷ without',
      targets: [
        {
          target: 'every answer 200, with and without the replica',
          actual: answeredOk(primaryOnly) && answeredOk(withReplica) ? 'all 200' : 'not all 200',
          met: answeredOk(primaryOnly) && answeredOk(withReplica),
        },
        {
          target: 'the replica serves ≥ 99 % of the reads',
          actual: `${(readShare * 100).toFixed(1)} %`,
          met: readShare >= 0.99,
        },
      ],
      details: { primaryOnly, withReplica },
      notes: [
        describeRun('Without the replica', primaryOnly),
        describeRun('With the replica', withReplica),
        'Both PostgreSQL servers run on the same cores as the service and the load generator, so a replica can ' +
          'only move work, not add capacity, here; on its own machine its share is capacity the primary gets back.',
      ],
    };
  } finally {
    await clusters.destroy();
  }
}
