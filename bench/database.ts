import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { onCleanup } from './processes.js';

export interface BenchDatabase {
  readonly kind: 'server' | 'embedded';
  /** The migrated database every scenario runs on. */
  readonly url: string;
  readonly name: string;
  readonly serverVersion: string;
  /** For seeding and checks; never used while a scenario is timed except where the scenario is the pool. */
  readonly pool: pg.Pool;
  /** A further empty database on the same server (dropped at the end); answers its URL. */
  createDatabase(name: string): Promise<string>;
}

export function quietLogger(): Logger {
  return pino({ level: 'warn', base: { component: 'bench' } }, pino.destination(2));
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onAdmin<T>(adminUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Stops the embedded server without waiting forever: its stop() hangs when postgres has already gone. */
export function killPostmaster(clusterDir: string, signal: NodeJS.Signals): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, signal);
    return pid;
  } catch {
    return undefined;
  }
}

async function startEmbedded(logger: Logger): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-bench-pg-'));
  const clusterDir = path.join(dataDir, 'postgres');
  let stopped = false;
  onCleanup(
    'embedded PostgreSQL',
    async () => {
      const pid = killPostmaster(clusterDir, 'SIGINT');
      for (let waited = 0; pid !== undefined && waited < 20_000; waited += 100) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (pid !== undefined) killPostmaster(clusterDir, 'SIGKILL');
      stopped = true;
      await rm(dataDir, { recursive: true, force: true });
    },
    () => {
      if (stopped) return;
      // Immediate shutdown: the runner is exiting and cannot wait for a fast one.
      killPostmaster(clusterDir, 'SIGQUIT');
      rmSync(dataDir, { recursive: true, force: true });
    },
  );
  console.error(`starting an embedded PostgreSQL in ${dataDir}…`);
  // pg_stat_statements counts the statements an operation costs (scenario 4); loaded for the whole run, so
  // every scenario and pgbench pay its small overhead alike.
  const embedded = await startEmbeddedPostgres({
    dataDir,
    port: 0,
    logger,
    settings: { shared_preload_libraries: 'pg_stat_statements' },
  });
  return embedded.url;
}

/**
 * BENCH_DATABASE_URL's server, or an embedded PostgreSQL in a temporary directory. Either way the run gets
 * fresh databases of its own, dropped (or deleted with the embedded server) at the end.
 */
export async function openBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  const logger = quietLogger();
  const adminUrl = serverUrl ?? (await startEmbedded(logger));
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const created: string[] = [];
  const createDatabase = async (name: string): Promise<string> => {
    await onAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
    created.push(name);
    return withDatabase(adminUrl, name);
  };
  if (serverUrl) {
    onCleanup('bench databases', () =>
      onAdmin(adminUrl, async (client) => {
        for (const name of created) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }),
    );
  }
  const name = `inventory_bench_${stamp}`;
  const url = await createDatabase(name);
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'inventory-bench' });
  pool.on('error', () => undefined);
  onCleanup('bench pool', () => pool.end());
  await migrate(pool, logger);
  const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
  return {
    kind: serverUrl ? 'server' : 'embedded',
    url,
    name,
    serverVersion: rows[0]?.server_version ?? 'unknown',
    pool,
    createDatabase: (suffix: string) => createDatabase(`${name}_${suffix}`),
  };
}

/**
 * Waits until the events of the runs before are numbered, then vacuums and analyses: a compared run must not share
 * the machine with the numbering of the last run's million events and the autovacuum its rows start (scenario 7's
 * keyed run, second, took twice the PostgreSQL CPU per product while they ran), nor plan on stale statistics.
 */
export async function settleBetweenRuns(pool: pg.Pool): Promise<void> {
  await waitForNumbering(pool);
  await pool.query('VACUUM ANALYZE');
}

/** Waits (5 minutes at most) until every event written so far has its position. */
export async function waitForNumbering(pool: pg.Pool): Promise<void> {
  for (const deadline = Date.now() + 300_000; Date.now() < deadline;) {
    const { rows } = await pool.query<{ waiting: boolean }>(
      'SELECT EXISTS (SELECT FROM event_outbox WHERE position IS NULL) AS waiting',
    );
    if (!rows[0]!.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
