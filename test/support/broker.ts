import { execFile } from 'node:child_process';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { describeWith } from './required-suite.js';
import { isRunning } from './service-process.js';

/**
 * The RabbitMQ the broker tests use (D28), and what they need around it: whether it answers, one test file at a
 * time on it, and rabbitmqctl to restart it or cut its connections.
 */
export const BROKER_HOST = '127.0.0.1';
export const BROKER_PORT = 5672;
export const BROKER_URL = `amqp://guest:guest@${BROKER_HOST}:${BROKER_PORT}`;

/** Whether something accepts a TCP connection on the broker's port within `timeoutMs`. */
export function brokerAnswers(timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: BROKER_HOST, port: BROKER_PORT });
    const finish = (answers: boolean): void => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

// Machine-wide, not per project: the broker is shared by every test run on this machine.
const LOCK_FILE = path.join(os.tmpdir(), 'inventory-service-broker-tests.lock');

/** The pid of a live process other than this one holding the broker lock, if any. */
async function otherLockHolder(): Promise<number | undefined> {
  const holder = Number(await readFile(LOCK_FILE, 'utf8').catch(() => ''));
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder) ? holder : undefined;
}

/**
 * Whether the broker answers. A file that restarts the broker (this run's, in the other worker, or another
 * run's) holds the lock meanwhile: a broker that is down on purpose is waited for, not taken for a missing one.
 */
async function detectBroker(): Promise<boolean> {
  for (const deadline = Date.now() + 600_000; ;) {
    if (await brokerAnswers()) return true;
    if (Date.now() > deadline || (await otherLockHolder()) === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Decided once per test file, when it is collected. */
export const brokerAvailable = await detectBroker();

/** `describe` when the broker answers; skipped with a notice, or failed with REQUIRE_BROKER=1 (CI). */
export function describeWithBroker(name: string, suite: () => void): void {
  const missing = brokerAvailable ? undefined : `no RabbitMQ answers at ${BROKER_HOST}:${BROKER_PORT}`;
  describeWith({ kind: 'BROKER', requireVariable: 'REQUIRE_BROKER', missing }, name, suite);
}

const run = promisify(execFile);

/** Runs rabbitmqctl with the arguments; answers its stdout. */
export async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', args, { timeout: 60_000 });
  return stdout;
}

async function waitUntil(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  for (const deadline = Date.now() + ms; ;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Stops the broker application (the node keeps running): clients lose their connections and cannot reconnect. */
export async function stopBroker(): Promise<void> {
  await rabbitmqctl('stop_app');
  await waitUntil(async () => !(await brokerAnswers(500)), 30_000, 'the broker to stop listening');
}

/** Starts the broker application again if it does not answer; resolves once it accepts connections. */
export async function ensureBrokerRunning(): Promise<void> {
  if (await brokerAnswers()) return;
  await rabbitmqctl('start_app');
  await rabbitmqctl('await_startup');
  await waitUntil(() => brokerAnswers(500), 60_000, 'the broker to accept connections');
}

/** The exchange as `rabbitmqctl list_exchanges` shows it, or undefined when the broker does not know it. */
export async function listedExchange(name: string): Promise<{ type: string; durable: boolean } | undefined> {
  const rows = (await rabbitmqctl('list_exchanges', '--quiet', '--no-table-headers', 'name', 'type', 'durable'))
    .split('\n')
    .map((line) => line.split('\t'));
  const row = rows.find(([rowName]) => rowName === name);
  return row ? { type: row[1] ?? '', durable: row[2] === 'true' } : undefined;
}

async function acquireLock(): Promise<void> {
  for (;;) {
    try {
      await writeFile(LOCK_FILE, String(process.pid), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(LOCK_FILE, 'utf8').catch(() => ''));
      // Files run one after another in a worker: one that failed to release it leaves it to the next.
      if (holder === process.pid) return;
      // A holder that died leaves the file; an empty one (its pid not yet written) is given a moment.
      if (Number.isInteger(holder) && holder > 0 && !isRunning(holder)) await unlink(LOCK_FILE).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function releaseLock(): Promise<void> {
  const holder = await readFile(LOCK_FILE, 'utf8').catch(() => '');
  if (holder === String(process.pid)) await unlink(LOCK_FILE);
}

/**
 * Gives the file the broker to itself for all its tests: files that restart the broker or cut its connections
 * must not do so under another file's deliveries, and test files run in parallel (and other runs may share the
 * machine). Register it before the hooks that connect to the broker. The broker answers when the file starts and
 * when it ends.
 */
export function useBrokerExclusively(): void {
  beforeAll(async () => {
    await acquireLock();
    await ensureBrokerRunning();
  }, 600_000);
  afterAll(async () => {
    try {
      await ensureBrokerRunning();
    } finally {
      await releaseLock();
    }
  }, 120_000);
}
