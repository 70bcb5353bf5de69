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
import { startTcpRoundRobin } from '../test/support/tcp-round-robin.js';

/** PostgreSQL's own shutdown modes: fast (SIGINT) rolls back and disconnects; immediate (SIGQUIT) is a crash. */
export type ShutdownMode = 'fast' | 'immediate';

const SHUTDOWN_SIGNAL: Record<ShutdownMode, NodeJS.Signals> = { fast: 'SIGINT', immediate: 'SIGQUIT' };
const SHUTDOWN_LIMIT_MS = 30_000;

export interface SoakDatabase {
  /** The same URL across restarts and failovers: same port, same password file. */
  readonly url: string;
  readonly serverVersion: string;
  /** Stops the server (fast) if it runs and deletes its data. */
  remove(): Promise<void>;
  /** Last resort when the runner itself is exiting (no event loop left): immediate shutdown, data deleted. */
  removeAtExit(): void;
}

/** A database the soak stops and starts again under the service's feet. */
export interface RestartableDatabase extends SoakDatabase {
  stop(mode: ShutdownMode): Promise<void>;
  start(): Promise<void>;
}

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

async function serverVersionOf(url: string): Promise<string> {
  return (await query<{ server_version: string }>(url, 'SHOW server_version'))[0]!.server_version;
}

/**
 * A throwaway embedded PostgreSQL in a temporary folder on a fixed port, so that it can be stopped and started
 * again under the service's feet. Its log goes to `logFile`.
 */
export async function startSoakDatabase(logFile: string): Promise<RestartableDatabase> {
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

  const serverVersion = await serverVersionOf(url);
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

export interface ReplicatedSoakDatabase extends RestartableDatabase {
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
  const serverVersion = await serverVersionOf(clusters.primaryUrl);
  return {
    url: clusters.primaryUrl,
    replicaUrl: clusters.replicaUrl,
    serverVersion,
    stop: (mode) => clusters.stopPrimary(mode),
    start: () => clusters.startPrimary(),
    stopReplica: () => clusters.stopReplica(),
    startReplica: () => clusters.startReplica(),
    remove: () => clusters.destroy(),
    removeAtExit: () => killAll([clusters.replicaDir, clusters.primaryDir], path.dirname(clusters.primaryDir)),
  };
}

/** When one failover happened, from the primary's SIGKILL (Date.now() values). */
export interface FailoverTimes {
  readonly killedAt: number;
  readonly movedAt: number;
  /** How long the new synchronous standby of the promoted server took (a base backup under load). */
  readonly standbyMs: number;
}

export interface FailoverSoakDatabase extends SoakDatabase {
  /**
   * Kills the primary's postmaster (SIGKILL), leaves the address dead for `outageMs` (as until a failover manager
   * acts), promotes the synchronous standby and moves the address to it; then makes the next synchronous standby
   * of the promoted server, so that the run can fail over again.
   */
  failover(outageMs: number): Promise<FailoverTimes>;
}

function killAll(dirs: readonly string[], base: string): void {
  for (const dir of dirs) killPostmaster(dir, 'SIGQUIT');
  rmSync(base, { recursive: true, force: true });
}

async function makeSynchronous(url: string): Promise<void> {
  await query(url, "ALTER SYSTEM SET synchronous_standby_names = '*'");
  await query(url, 'SELECT pg_reload_conf()');
}

/**
 * Issue 37 (D41), as test/replicas/failover.test.ts builds it: a PostgreSQL 15 primary with a synchronous streaming
 * replica, reached through a TCP forwarder (a virtual IP or a PgBouncer's reload) that the soak moves to the
 * promoted replica. `url` is the forwarder's.
 */
export async function startFailoverSoakDatabase(): Promise<FailoverSoakDatabase> {
  const clusters = await startReplicatedClusters();
  await makeSynchronous(clusters.primaryUrl);
  const address = await startTcpRoundRobin([Number(new URL(clusters.primaryUrl).port)]);
  const dirs = [clusters.primaryDir, clusters.replicaDir];
  let primary = { url: clusters.primaryUrl, dir: clusters.primaryDir };
  let standby = { url: clusters.replicaUrl, dir: clusters.replicaDir };
  return {
    url: `postgres://postgres@127.0.0.1:${address.port}/postgres`,
    serverVersion: await serverVersionOf(clusters.primaryUrl),
    async failover(outageMs) {
      const killedAt = Date.now();
      if (killPostmaster(primary.dir, 'SIGKILL') === undefined)
        throw new Error(`no postmaster to kill in ${primary.dir}`);
      await sleep(outageMs);
      await query(standby.url, 'SELECT pg_promote(true, 30)');
      // The base backup copied the old primary's setting; without a standby of its own every commit would wait.
      await query(standby.url, 'ALTER SYSTEM RESET synchronous_standby_names');
      await query(standby.url, 'SELECT pg_reload_conf()');
      const movedAt = Date.now();
      address.moveTo(Number(new URL(standby.url).port));
      primary = standby;
      const standbyStarted = Date.now();
      standby = await clusters.addReplica(primary.url);
      dirs.push(standby.dir);
      await makeSynchronous(primary.url);
      return { killedAt, movedAt, standbyMs: Date.now() - standbyStarted };
    },
    remove: async () => {
      await address.close();
      await clusters.destroy();
    },
    removeAtExit: () => killAll(dirs, path.dirname(clusters.primaryDir)),
  };
}

export interface ReplicasSoakDatabase extends SoakDatabase {
  /** The round-robin balancer in front of the replicas, for the instances' DATABASE_READ_URL. */
  readonly readUrl: string;
  readonly replicas: number;
  /** Connections the balancer handed to each replica so far. */
  readonly readConnections: readonly number[];
  /** Pauses the replay of the last replica for `ms` (pg_wal_replay_pause()), then resumes it. */
  pauseReplica(ms: number): Promise<void>;
}

/**
 * Issue 37 (D41), as test/replicas/replicas-behind-balancer.test.ts builds it: a PostgreSQL 15 primary and
 * `replicas` streaming replicas behind a round-robin TCP balancer (a Kubernetes Service).
 */
export async function startReplicasSoakDatabase(replicas: number): Promise<ReplicasSoakDatabase> {
  const clusters = await startReplicatedClusters(replicas);
  const replicaUrls = [clusters.replicaUrl, ...clusters.moreReplicaUrls];
  const balancer = await startTcpRoundRobin(replicaUrls.map((url) => Number(new URL(url).port)));
  const paused = replicaUrls.at(-1)!;
  const base = path.dirname(clusters.primaryDir);
  return {
    url: clusters.primaryUrl,
    readUrl: `postgres://postgres@127.0.0.1:${balancer.port}/postgres`,
    replicas,
    readConnections: balancer.connections,
    serverVersion: await serverVersionOf(clusters.primaryUrl),
    async pauseReplica(ms) {
      await query(paused, 'SELECT pg_wal_replay_pause()');
      try {
        await sleep(ms);
      } finally {
        await query(paused, 'SELECT pg_wal_replay_resume()');
      }
    },
    remove: async () => {
      await balancer.close();
      await clusters.destroy();
    },
    removeAtExit: () => {
      // addReplica's folders: replica2, replica3, …
      const more = clusters.moreReplicaUrls.map((_, index) => path.join(base, `replica${index + 2}`));
      killAll([clusters.primaryDir, clusters.replicaDir, ...more], base);
    },
  };
}
