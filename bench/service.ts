import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../test/support/ports.js';
import { ensureBuilt, MAIN_JS, PROJECT_ROOT } from '../test/support/service-process.js';
import { spawnTracked, waitForHttp, type TrackedProcess } from './processes.js';

/** application_name of the service's pool (src/db/pool.ts) and of the ceiling app's, for pg_stat_activity. */
export const SERVICE_APPLICATION = 'inventory-service';
/** application_name of the service's events pool: numbering and publishing (src/events/runtime.ts). */
export const EVENTS_APPLICATION = 'inventory-service-events';
export const CEILING_APPLICATION = 'bench-ceiling-app';
export const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');

export interface RunningServer {
  readonly process: TrackedProcess;
  readonly baseUrl: string;
}

/** Profiles go to bench/results/profiles/<name>/ under V8's default names: one file per thread, the largest is main. */
function cpuProfileArgs(name: string): string[] {
  const directory = path.join(RESULTS_DIR, 'profiles', name);
  rmSync(directory, { recursive: true, force: true });
  return ['--cpu-prof', `--cpu-prof-dir=${directory}`];
}

function logFile(name: string): number {
  mkdirSync(RESULTS_DIR, { recursive: true });
  return openSync(path.join(RESULTS_DIR, name), 'w');
}

// The build the run measures: a copy of dist/ (and migrations/, which dist/db/migrate.js finds at ../../) taken at
// the start. The working tree is shared: a test run elsewhere rebuilds dist/ when src/ changes, and an instance
// started mid-run (the events scenarios start their own) would then run another build, or fail on files tsc is
// still writing.
const BUILD_COPY = path.join(RESULTS_DIR, 'build');
let frozenMain: string | undefined;

async function newestModification(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? await newestModification(full) : (await stat(full)).mtimeMs);
  }
  return newest;
}

/** The lock test/support/service-process.ts takes while it builds: held here while dist/ is copied. */
async function underBuildLock<T>(run: () => Promise<T>): Promise<T> {
  const lock = path.join(os.tmpdir(), `inventory-build-${createHash('sha1').update(PROJECT_ROOT).digest('hex')}.lock`);
  for (const deadline = Date.now() + 180_000; ;) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await run();
  } finally {
    if ((await readFile(lock, 'utf8').catch(() => '')) === String(process.pid))
      await unlink(lock).catch(() => undefined);
  }
}

/**
 * Builds dist/ if src/ is newer, then copies it to bench/results/build/; every instance of the service the run
 * starts without BENCH_SERVICE_MAIN runs that copy, so all scenarios measure one build. Answers its main.js.
 */
export async function freezeBuild(): Promise<string> {
  for (;;) {
    await ensureBuilt();
    const copied = await underBuildLock(async () => {
      if ((await stat(MAIN_JS)).mtimeMs < (await newestModification(path.join(PROJECT_ROOT, 'src')))) return false;
      rmSync(BUILD_COPY, { recursive: true, force: true });
      cpSync(path.dirname(MAIN_JS), path.join(BUILD_COPY, 'dist'), { recursive: true });
      cpSync(path.join(PROJECT_ROOT, 'migrations'), path.join(BUILD_COPY, 'migrations'), { recursive: true });
      return true;
    });
    if (copied) {
      frozenMain = path.join(BUILD_COPY, 'dist', path.basename(MAIN_JS));
      return frozenMain;
    }
  }
}

/** The log files of the service processes this run started (bench/results/<name>.log), for the run's statistics. */
export const serviceLogs: string[] = [];

/**
 * `node dist/main.js` (the run's copy of it, see freezeBuild) as in production: real secret, logging at info into
 * bench/results/<name>.log (default `service`; the events scenarios start further instances under names of their
 * own).
 */
export async function startService(options: {
  databaseUrl: string;
  jwtSecret: string;
  cpuProfile: boolean;
  main?: string;
  env?: Record<string, string>;
  name?: string;
}): Promise<RunningServer> {
  const name = options.name ?? 'service';
  const port = await freePort();
  const log = logFile(`${name}.log`);
  serviceLogs.push(path.join(RESULTS_DIR, `${name}.log`));
  const profileArgs = options.cpuProfile ? cpuProfileArgs(name) : [];
  const tracked = spawnTracked(
    `inventory ${name}`,
    process.execPath,
    [...profileArgs, options.main ?? frozenMain ?? MAIN_JS],
    {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: options.databaseUrl,
        AUTH_JWT_SECRET: options.jwtSecret,
        LOG_LEVEL: 'info',
        DATA_DIR: path.join(os.tmpdir(), 'inventory-bench-unused-data'),
        ...options.env,
      },
      stdio: ['ignore', log, log],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/actuator/health`, tracked);
  return { process: tracked, baseUrl };
}

/** The bare Express 5 + pg app of bench/ceiling-app.ts, with the service's pool size. */
export async function startCeilingApp(
  databaseUrl: string,
  cpuProfile: boolean,
  pgbench?: { url: string; scale: number },
): Promise<RunningServer> {
  const port = await freePort();
  const log = logFile('ceiling-app.log');
  const tracked = spawnTracked(
    'ceiling app',
    process.execPath,
    [
      ...(cpuProfile ? cpuProfileArgs('ceiling-app') : []),
      '--import',
      'tsx',
      path.join(PROJECT_ROOT, 'bench', 'ceiling-app.ts'),
    ],
    {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        DB_POOL_MAX: '10',
        ...(pgbench ? { PGBENCH_DATABASE_URL: pgbench.url, PGBENCH_SCALE: String(pgbench.scale) } : {}),
      },
      stdio: ['ignore', log, log],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/health`, tracked);
  return { process: tracked, baseUrl };
}
