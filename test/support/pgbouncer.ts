import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

/**
 * Debian's PgBouncer (issue 17) in transaction mode, started by a test in front of the run's PostgreSQL on a free
 * loopback port, with its configuration in a temporary folder. `.ci/run` installs it with apt-get.
 */
function findBinary(): string | undefined {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    if (spawnSync(candidate, ['--version']).status === 0) return candidate;
  }
  const found = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

export const pgbouncerBinary = findBinary();

export interface PgBouncer {
  readonly port: number;
  /** The URL of `database` through the pooler, with the server's user and password. */
  urlOf(database: string): string;
  /** A statement on the admin console (`SHOW POOLS`, `SHOW SERVERS`, …). */
  admin<Row extends pg.QueryResultRow>(command: string): Promise<Row[]>;
  /** Server connections the pooler holds to `database` now. */
  serverConnections(database: string): Promise<number>;
  /** Client connections to `database` now. */
  clientConnections(database: string): Promise<number>;
  stop(): Promise<void>;
  /** SIGKILL, for a runner that is exiting with no event loop left. */
  killAtExit(): void;
}

export interface PgBouncerOptions {
  /** A URL of the PostgreSQL server (any database: every database name is passed through). */
  readonly serverUrl: string;
  /** Server connections per database and user. */
  readonly poolSize: number;
  /** More `[pgbouncer]` settings, e.g. `server_login_retry`. */
  readonly settings?: Readonly<Record<string, string | number>>;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function configuration(server: URL, port: number, options: PgBouncerOptions, authFile: string): string {
  const more = Object.entries(options.settings ?? {}).map(([name, value]) => `${name} = ${value}\n`);
  return `[databases]
* = host=${server.hostname} port=${server.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
pool_mode = transaction
default_pool_size = ${options.poolSize}
max_client_conn = 1000
auth_type = trust
auth_file = ${authFile}
admin_users = ${decodeURIComponent(server.username)}
${more.join('')}`;
}

async function launch(directory: string, options: PgBouncerOptions): Promise<{ child: ChildProcess; port: number }> {
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username);
  const authFile = path.join(directory, 'userlist.txt');
  // Clients are trusted on loopback; the server's password is what PgBouncer logs in to PostgreSQL with.
  await writeFile(authFile, `"${user}" "${decodeURIComponent(server.password)}"\n`, { mode: 0o644 });
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const ini = path.join(directory, 'pgbouncer.ini');
    await writeFile(ini, configuration(server, port, options, authFile), { mode: 0o644 });
    // PgBouncer refuses to run as root; it drops to `nobody`, which may read the (world-readable) folder.
    const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const child = spawn(pgbouncerBinary!, [...asRoot, ini], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = once(child, 'exit');
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && child.exitCode === null;) {
      if (await answers(port)) return { child, port };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    if (attempt === 3) throw new Error(`pgbouncer did not start: ${log}`);
  }
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-pgbouncer-'));
  await chmod(directory, 0o755);
  const { child, port } = await launch(directory, options);
  const urlOf = (database: string): string => {
    const url = new URL(options.serverUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const admin = async <Row extends pg.QueryResultRow>(command: string): Promise<Row[]> => {
    const client = new pg.Client({ connectionString: urlOf('pgbouncer') });
    await client.connect();
    try {
      return (await client.query<Row>(command)).rows;
    } finally {
      await client.end();
    }
  };
  const count = async (command: string, database: string): Promise<number> =>
    (await admin<{ database: string }>(command)).filter((row) => row.database === database).length;
  return {
    port,
    urlOf,
    admin,
    serverConnections: (database) => count('SHOW SERVERS', database),
    clientConnections: (database) => count('SHOW CLIENTS', database),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
    killAtExit() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
