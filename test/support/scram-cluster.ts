import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';
import { PG_BIN } from './replicated-clusters.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** A user the tests run servers as: `postgres` when the runner is root (PostgreSQL and PgBouncer refuse root). */
export async function unprivilegedIds(name = 'postgres'): Promise<{ uid: number; gid: number } | undefined> {
  if (!asRoot) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

async function asPostgres(tool: string, args: string[]): Promise<void> {
  const command = path.join(PG_BIN, tool);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, argv, { timeout: 60_000 });
}

export interface ScramCluster {
  readonly port: number;
  /** The superuser over the cluster's Unix socket (trusted there). */
  readonly adminUrl: string;
  /** The login role and database `name`, owned by it, with password `password`: over TCP only with SCRAM. */
  createOwner(name: string, password: string): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A throwaway PostgreSQL 15 cluster whose pg_hba.conf asks every TCP client for `scram-sha-256` (what a deployment's
 * does, and what PgBouncer's `auth_type = scram-sha-256` must get through); the superuser comes in by its socket.
 */
export async function startScramCluster(): Promise<ScramCluster> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'scram-cluster-'));
  const owner = await unprivilegedIds();
  if (owner) await chown(base, owner.uid, owner.gid);
  const dataDir = path.join(base, 'data');
  const port = await freePort();
  const adminUrl = `postgres://postgres@${encodeURIComponent(base)}:${port}/postgres`;
  let started = false;
  const destroy = async (): Promise<void> => {
    if (started) await asPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  };
  try {
    await asPostgres('initdb', [
      ...['-D', dataDir, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256'],
      ...['--no-sync', '-E', 'UTF8'],
    ]);
    const settings = [`port = ${port}`, `listen_addresses = '127.0.0.1'`, `unix_socket_directories = '${base}'`];
    await appendFile(path.join(dataDir, 'postgresql.conf'), [...settings, 'fsync = off', ''].join('\n'));
    await asPostgres('pg_ctl', ['-D', dataDir, '-l', path.join(base, 'server.log'), '-w', 'start']);
    started = true;
  } catch (error) {
    await destroy();
    throw error;
  }
  const admin = async (text: string): Promise<void> => {
    const client = new pg.Client({ host: base, port, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  return {
    port,
    adminUrl,
    async createOwner(name, password) {
      await admin(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
      await admin(`CREATE DATABASE ${name} OWNER ${name}`);
    },
    destroy,
  };
}
