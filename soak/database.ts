import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { killPostmaster } from '../bench/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { freePort } from '../test/support/ports.js';
import { isRunning, postmasterPid } from '../test/support/service-process.js';
import { removeTempDir, sleep, tempDir } from '../test/reliability/harness.js';
import { startReplicatedClusters } from '../test/support/replicated-clusters.js';

/** PostgreSQL's own shutdown modes: fast (SIGINT) rolls back and disconnects; immediate (SIGQUIT) is a crash. */
export type ShutdownMode = 'fast' | 'immediate';

const SHUTDOWN_SIGNAL: Record<ShutdownMode, NodeJS.Signals> = { fast: 'SIGINT', immediate: 'SIGQUIT' };
const SHUTDOWN_LIMIT_MS = 30_000;

export interface SoakDatabase {
  /** The same URL across restarts: same port, same password file. */
  readonly url: string;
  readonly serverVersion: string;
  stop(mode: ShutdownMode): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (fast) if it runs and deletes its data. */
  remove(): Promise<void>;
  /** Last resort when the runner itself is exiting (no event loop left): immediate shutdown, data deleted. */
  removeAtExit(): void;
}

/**
 * A throwaway embedded PostgreSQL in a temporary folder on a fixed port, so that it can be stopped and started
 * again under the service's feet. Its log goes to `logFile`.
 */
export async function startSoakDatabase(logFile: string): Promise<SoakDatabase> {
  const dataDir = await tempDir('inventory-soak-pg-');
  const port = await freePort();
  const logger = pino({ level: 'trace', base: { component: 'soak-postgres' } }, pino.destination(logFile));
  const start = async (): Promise<string> => (await startEmbeddedPostgres({ dataDir, port, logger })).url;
  const url = await start();

  // The library's own stop() waits for an exit it may already have missed; signalling the postmaster does not.
  const stop = async (mode: ShutdownMode): Promise<void> => {
    const pid = await postmasterPid(dataDir);
    if (pid === undefined || !isRunning(pid)) return;
    process.kill(pid, SHUTDOWN_SIGNAL[mode]);
    for (const deadline = Date.now() + SHUTDOWN_LIMIT_MS; isRunning(pid); await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL (pid ${pid}) did not stop within ${SHUTDOWN_LIMIT_MS} ms`);
    }
  };

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const serverVersion = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  await client.end();

  return {
    url,
    serverVersion,
    stop,
    start: async () => {
      await start();
    },
    remove: async () => {
      await stop('fast').catch(() => undefined);
      await removeTempDir(dataDir);
    },
    removeAtExit: () => {
      killPostmaster(path.join(dataDir, 'postgres'), 'SIGQUIT');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ReplicatedSoakDatabase extends SoakDatabase {
  /** A streaming replica of it (issue 17), for the instances' DATABASE_READ_URL. */
  readonly replicaUrl: string;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
}

/**
 * Issue 17: a PostgreSQL 15 primary and its streaming replica (test/support/replicated-clusters.ts) in place of the
 * embedded server; the primary is stopped and started as the embedded one is, the replica streams again after it.
 */
export async function startReplicatedSoakDatabase(): Promise<ReplicatedSoakDatabase> {
  const clusters = await startReplicatedClusters();
  const client = new pg.Client({ connectionString: clusters.primaryUrl });
  await client.connect();
  const serverVersion = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  await client.end();
  return {
    url: clusters.primaryUrl,
    replicaUrl: clusters.replicaUrl,
    serverVersion,
    stop: (mode) => clusters.stopPrimary(mode),
    start: () => clusters.startPrimary(),
    stopReplica: () => clusters.stopReplica(),
    startReplica: () => clusters.startReplica(),
    remove: () => clusters.destroy(),
    removeAtExit: () => {
      for (const dir of [clusters.replicaDir, clusters.primaryDir]) killPostmaster(dir, 'SIGQUIT');
      rmSync(path.dirname(clusters.primaryDir), { recursive: true, force: true });
    },
  };
}
