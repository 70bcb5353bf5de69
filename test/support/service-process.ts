import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN_JS = path.join(PROJECT_ROOT, 'dist', 'main.js');

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly baseUrl: string;
  readonly exited: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  /** The service's JSON log lines (stdout), parsed. */
  logEntries(): Record<string, unknown>[];
}

async function newestModification(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    const time = entry.isDirectory() ? await newestModification(full) : (await stat(full)).mtimeMs;
    newest = Math.max(newest, time);
  }
  return newest;
}

async function isStale(): Promise<boolean> {
  const srcTime = await newestModification(path.join(PROJECT_ROOT, 'src'));
  return !existsSync(MAIN_JS) || (await stat(MAIN_JS)).mtimeMs < srcTime;
}

/**
 * Test files in parallel workers may all find dist stale; one builds while the others wait, so nobody starts
 * node on files tsc is still writing.
 */
async function underBuildLock(run: () => Promise<void>): Promise<void> {
  const lock = path.join(os.tmpdir(), `inventory-build-${createHash('sha1').update(PROJECT_ROOT).digest('hex')}.lock`);
  for (const deadline = Date.now() + 180_000; ;) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw error;
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 180_000) await unlink(lock).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    await run();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/** `npm run build` when dist/main.js is missing or older than any file under src/. */
export async function ensureBuilt(): Promise<void> {
  if (!(await isStale())) return;
  await underBuildLock(async () => {
    if (!(await isStale())) return;
    await promisify(execFile)('npm', ['run', 'build'], { cwd: PROJECT_ROOT, timeout: 120_000 });
  });
}

/** Starts `node dist/main.js` with exactly the given environment (plus PATH and HOME), as an operator would. */
export function startService(environment: Record<string, string>, port: number): ServiceProcess {
  const child = spawn(process.execPath, [MAIN_JS], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      PORT: String(port),
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  // 'close', not 'exit': only then has everything the process wrote to stdout and stderr been read.
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    exited,
    stdout: () => out,
    stderr: () => err,
    logEntries: () =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

function timeout<T>(ms: number, what: string): Promise<T> {
  return new Promise((_resolve, reject) =>
    setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms),
  );
}

/** The last lines the service wrote, so that a test that times out on it says what it was doing. */
function outputTail(service: ServiceProcess, lines = 30): string {
  const tail = (text: string): string => text.split('\n').slice(-lines).join('\n');
  return `\nstdout:\n${tail(service.stdout())}\nstderr:\n${tail(service.stderr())}`;
}

export async function waitForExit(service: ServiceProcess, ms: number): Promise<Exit> {
  return Promise.race([
    service.exited,
    timeout<Exit>(ms, 'waiting for the service to exit').catch((error: Error) => {
      throw new Error(error.message + outputTail(service));
    }),
  ]);
}

/** Whether the process itself holds a listening TCP socket on the port (Linux /proc; assumed true elsewhere). */
async function listensOn(pid: number, port: number): Promise<boolean> {
  if (!existsSync('/proc/net/tcp')) return true;
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1 (ADDR:PORT in hex), st field 3 (0A = LISTEN), inode field 9.
      if (fields[1]?.endsWith(`:${portHex}`) && fields[3] === '0A' && inodes.has(fields[9] ?? '')) return true;
    }
  }
  return false;
}

/**
 * Polls /actuator/health until it answers UP, counting only once this very process listens on the port, so
 * another server that took the port in the meantime is never mistaken for it. Fails early, with the output,
 * if the process dies.
 */
export async function waitUntilUp(service: ServiceProcess, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  let exit: Exit | undefined;
  void service.exited.then((value) => (exit = value));
  while (Date.now() < deadline) {
    if (exit) {
      throw new Error(
        `service exited (${JSON.stringify(exit)}) before it was up:\n${service.stderr()}${service.stdout()}`,
      );
    }
    if (service.child.pid !== undefined && (await listensOn(service.child.pid, service.port))) {
      try {
        const response = await fetch(`${service.baseUrl}/actuator/health`, { signal: AbortSignal.timeout(2000) });
        if (response.status === 200 && ((await response.json()) as { status?: string }).status === 'UP') return;
      } catch {
        // answered nothing yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`service not UP within ${ms} ms:\n${service.stderr()}${service.stdout()}`);
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line mentions the directory (the embedded postmaster runs with `-D dir`). */
export async function processesUsing(directory: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      if (commandLine.includes(directory)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

/** The embedded postmaster pid recorded in DATA_DIR, if any. */
export async function postmasterPid(dataDir: string): Promise<number | undefined> {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number((await readFile(file, 'utf8')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
