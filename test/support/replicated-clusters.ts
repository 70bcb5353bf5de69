import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

/**
 * Issue 17: a throwaway primary and its streaming replica (pg_basebackup -R), both PostgreSQL 15 on loopback ports,
 * for the read-replica tests. PostgreSQL refuses to run as root: as root, the clusters belong to the `postgres` user.
 */
export const PG_BIN = process.env.PG_REPLICA_BIN ?? '/usr/lib/postgresql/15/bin';
const TOOLS = ['initdb', 'pg_ctl', 'pg_basebackup'];

const run = promisify(execFile);

/** Why the clusters cannot be made here (which tools are missing), or undefined when they can. */
export function missingReplicaTools(): string | undefined {
  const missing = TOOLS.filter((tool) => !existsSync(path.join(PG_BIN, tool)));
  return missing.length === 0 ? undefined : `${missing.join(', ')} not found in ${PG_BIN}`;
}

export interface ReplicatedClusters {
  readonly primaryUrl: string;
  readonly replicaUrl: string;
  /** The data directories, whose postmaster.pid names each server's postmaster. */
  readonly primaryDir: string;
  readonly replicaDir: string;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops the primary with PostgreSQL's own shutdown mode; the replica keeps trying to stream from it. */
  stopPrimary(mode: 'fast' | 'immediate'): Promise<void>;
  startPrimary(): Promise<void>;
  /** Runs a statement on the replica (pg_wal_replay_pause() and the like). */
  onReplica<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** Runs a statement on the primary (ALTER SYSTEM and the like). */
  onPrimary<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** The replicas after the first (`startReplicatedClusters(n)` with n > 1), each streaming from the primary. */
  readonly moreReplicaUrls: readonly string[];
  /**
   * One more replica, a base backup of the server at `fromUrl` (the primary, or a promoted replica after a
   * failover) streaming from it; stopped by destroy().
   */
  addReplica(fromUrl: string): Promise<{ url: string; dir: string }>;
  destroy(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

async function asPostgres(tool: string, args: string[]): Promise<void> {
  const command = path.join(PG_BIN, tool);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, argv, { timeout: 60_000 });
}

async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (!asRoot) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function settings(port: number, socketDir: string): string {
  return [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${socketDir}'`,
    'wal_level = replica',
    'max_wal_senders = 4',
    'hot_standby = on',
    'max_connections = 60',
    // A test cluster: durability is not what is tested, and syncing would only slow the shared machine.
    'fsync = off',
    'full_page_writes = off',
    '',
  ].join('\n');
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A primary (wal_level=replica, a replication role on loopback) and a replica streaming from it. */
export async function startReplicatedClusters(replicas = 1): Promise<ReplicatedClusters> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'replica-test-'));
  const owner = await postgresIds();
  if (owner) await chown(base, owner.uid, owner.gid);
  const primaryDir = path.join(base, 'primary');
  const replicaDir = path.join(base, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  const started: string[] = [];
  let replicaCount = 1;
  const stop = async (dir: string, mode: 'fast' | 'immediate' = 'immediate'): Promise<void> => {
    await asPostgres('pg_ctl', ['-D', dir, '-m', mode, '-w', 'stop']).catch(() => undefined);
  };
  const startPrimary = async (): Promise<void> => {
    await asPostgres('pg_ctl', ['-D', primaryDir, '-l', path.join(base, 'primary.log'), '-w', 'start']);
  };
  const destroy = async (): Promise<void> => {
    for (const dir of started.reverse()) await stop(dir);
    await rm(base, { recursive: true, force: true });
  };

  try {
    await asPostgres('initdb', ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    await appendFile(path.join(primaryDir, 'postgresql.conf'), settings(primaryPort, base));
    await appendFile(path.join(primaryDir, 'pg_hba.conf'), 'host replication replicator 127.0.0.1/32 trust\n');
    await startPrimary();
    started.push(primaryDir);
    await query(primaryUrl, 'CREATE ROLE replicator WITH REPLICATION LOGIN');

    await asPostgres('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'replicator'],
      ...['-D', replicaDir, '-R', '-X', 'stream', '--no-sync'],
    ]);
    // The copied postgresql.conf names the primary's port; a later line wins.
    await appendFile(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\n`);
    const startReplica = async (): Promise<void> => {
      await asPostgres('pg_ctl', ['-D', replicaDir, '-l', path.join(base, 'replica.log'), '-w', 'start']);
      if (!started.includes(replicaDir)) started.push(replicaDir);
      await waitUntil('the replica to stream from the primary', async () => {
        const [row] = await query<{ streaming: boolean }>(
          primaryUrl,
          "SELECT count(*) > 0 AS streaming FROM pg_stat_replication WHERE state = 'streaming'",
        );
        return row?.streaming === true;
      });
    };
    await startReplica();
    const addReplica = async (fromUrl: string): Promise<{ url: string; dir: string }> => {
      const dir = path.join(base, `replica${++replicaCount}`);
      const port = await freePort();
      await asPostgres('pg_basebackup', [
        ...['-h', '127.0.0.1', '-p', new URL(fromUrl).port, '-U', 'replicator'],
        ...['-D', dir, '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast'],
      ]);
      await appendFile(path.join(dir, 'postgresql.conf'), `port = ${port}\n`);
      await asPostgres('pg_ctl', ['-D', dir, '-l', `${dir}.log`, '-w', 'start']);
      started.push(dir);
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir };
    };
    const moreReplicaUrls: string[] = [];
    for (let n = 2; n <= replicas; n++) moreReplicaUrls.push((await addReplica(primaryUrl)).url);
    return {
      moreReplicaUrls,
      addReplica,
      primaryUrl,
      replicaUrl,
      primaryDir,
      replicaDir,
      stopReplica: () => stop(replicaDir),
      startReplica,
      stopPrimary: (mode) => stop(primaryDir, mode),
      startPrimary,
      onReplica: (text, values) => query(replicaUrl, text, values),
      onPrimary: (text, values) => query(primaryUrl, text, values),
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}
