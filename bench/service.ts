import { mkdirSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../test/support/ports.js';
import { MAIN_JS, PROJECT_ROOT } from '../test/support/service-process.js';
import { spawnTracked, waitForHttp, type TrackedProcess } from './processes.js';

/** application_name of the service's pool (src/db/pool.ts) and of the ceiling app's, for pg_stat_activity. */
export const SERVICE_APPLICATION = 'inventory-service';
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
