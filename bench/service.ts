import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { readdir, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, spawnTracked, waitForHttp, type TrackedProcess } from './processes.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
/** application_name of the service's pool (src/db/pool.ts) and of the ceiling app's, for pg_stat_activity. */
export const SERVICE_APPLICATION = 'inventory-service';
export const CEILING_APPLICATION = 'bench-ceiling-app';
export const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');
const MAIN_JS = path.join(PROJECT_ROOT, 'dist', 'main.js');

export interface RunningServer {
  readonly process: TrackedProcess;
  readonly baseUrl: string;
}

async function newestModification(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? await newestModification(full) : (await stat(full)).mtimeMs);
  }
  return newest;
}

async function isStale(): Promise<boolean> {
  if (!existsSync(MAIN_JS)) return true;
  return (await stat(MAIN_JS)).mtimeMs < (await newestModification(path.join(PROJECT_ROOT, 'src')));
}

/**
 * `npm run build` when dist/ is missing or older than src/. The lock file is the one the test suite's
 * service fixture uses, so a build started by a concurrent test run and this one never write dist/ together.
 */
export async function ensureBuilt(): Promise<boolean> {
  if (!(await isStale())) return false;
  const root = PROJECT_ROOT.endsWith('/') ? PROJECT_ROOT : `${PROJECT_ROOT}/`;
  const lock = path.join(os.tmpdir(), `inventory-build-${createHash('sha1').update(root).digest('hex')}.lock`);
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
    if (!(await isStale())) return false;
    console.error('dist/ is missing or older than src/: npm run build…');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: PROJECT_ROOT, timeout: 300_000 });
    return true;
  } finally {
    await unlink(lock).catch(() => undefined);
  }
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

/** `node dist/main.js` as in production: real secret, logging at info into bench/results/service.log. */
export async function startService(options: {
  databaseUrl: string;
  jwtSecret: string;
  cpuProfile: boolean;
  main?: string;
  env?: Record<string, string>;
}): Promise<RunningServer> {
  const port = await freePort();
  const log = logFile('service.log');
  const profileArgs = options.cpuProfile ? cpuProfileArgs('service') : [];
  const tracked = spawnTracked('inventory service', process.execPath, [...profileArgs, options.main ?? MAIN_JS], {
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
  });
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
