import { randomUUID } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, unlinkSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import type pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from 'rabbitmq-client';
import { JWT_SECRET, wallClockMs } from './load.js';
import { onCleanup, stopProcess } from './processes.js';
import { step } from './progress.js';
import type { BenchContext } from './results.js';
import { RESULTS_DIR, startService, type RunningServer } from './service.js';
import { isRunning } from '../test/support/service-process.js';

/** Thrown by a scenario that cannot run here (no broker): the run reports it as skipped, not as failed. */
export class ScenarioSkipped extends Error {}

/** The broker's address without credentials, for messages and the report. */
export function brokerAddress(amqpUrl: string): string {
  const url = new URL(amqpUrl);
  return `${url.hostname}:${url.port || (url.protocol === 'amqps:' ? 5671 : 5672)}`;
}

function answers(amqpUrl: string, timeoutMs = 2000): Promise<boolean> {
  const url = new URL(amqpUrl);
  const port = Number(url.port || (url.protocol === 'amqps:' ? 5671 : 5672));
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port });
    const finish = (reachable: boolean): void => {
      socket.destroy();
      resolve(reachable);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

// The lock test/support/broker.ts takes for a broker test file (machine-wide: the broker is shared). Holding it
// keeps the fault tests from restarting the broker under a measurement, and waits for one that is doing so.
const BROKER_LOCK = path.join(os.tmpdir(), 'inventory-service-broker-tests.lock');

async function lockBroker(): Promise<void> {
  let told = false;
  for (;;) {
    try {
      await writeFile(BROKER_LOCK, String(process.pid), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(BROKER_LOCK, 'utf8').catch(() => ''));
      if (Number.isInteger(holder) && holder > 0 && !isRunning(holder))
        await unlink(BROKER_LOCK).catch(() => undefined);
      else if (!told) {
        step(`waiting for the broker: a broker test (pid ${holder || '?'}) has it to itself (${BROKER_LOCK})`);
        told = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function unlockBroker(): void {
  try {
    if (readFileSync(BROKER_LOCK, 'utf8') === String(process.pid)) unlinkSync(BROKER_LOCK);
  } catch {
    // Not held.
  }
}

let lockCleanup = false;

/**
 * Runs an events scenario with the broker to itself (the broker tests' lock); skips it (ScenarioSkipped) when
 * nothing answers at BENCH_AMQP_URL.
 */
export async function withBroker<T>(ctx: BenchContext, scenario: number, run: () => Promise<T>): Promise<T> {
  if (!lockCleanup) {
    onCleanup('broker lock', async () => unlockBroker(), unlockBroker);
    lockCleanup = true;
  }
  await lockBroker();
  try {
    if (!(await answers(ctx.config.amqpUrl))) {
      throw new ScenarioSkipped(
        `scenario ${scenario} skipped: no RabbitMQ answers at ${brokerAddress(ctx.config.amqpUrl)} (BENCH_AMQP_URL)`,
      );
    }
    return await run();
  } finally {
    unlockBroker();
  }
}

let exchange: string | undefined;

/**
 * The run's own exchange, one for both events scenarios: the relay's mark (event_relay_state) is per exchange,
 * so scenario 9's instance goes on where scenario 8's stopped instead of publishing the whole outbox again.
 * Durable (D28), so it is deleted at the end of the run.
 */
export function benchExchange(amqpUrl: string): string {
  if (exchange) return exchange;
  const name = `inventory-bench-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}-${randomUUID().slice(0, 8)}`;
  exchange = name;
  onCleanup(`exchange ${name}`, async () => {
    const connection = new Connection({ url: amqpUrl, retryLow: 200, retryHigh: 1000, connectionTimeout: 5000 });
    connection.on('error', () => undefined);
    try {
      await connection.exchangeDelete({ exchange: name });
    } finally {
      await connection.close();
    }
  });
  return name;
}

/** What waits in the outbox for the exchange's relay, counted as the health check's `events.backlog` is. */
async function outboxBacklog(pool: pg.Pool, exchangeName: string): Promise<number> {
  const { rows } = await pool.query<{ backlog: string }>(
    `SELECT ((SELECT sequenced_through FROM event_feed_state WHERE id = 1)
             - COALESCE((SELECT published_through FROM event_relay_state WHERE exchange = $1),
                        (SELECT pruned_through FROM event_feed_state WHERE id = 1))
             + (SELECT count(*) FROM event_outbox WHERE position IS NULL))::text AS backlog`,
    [exchangeName],
  );
  return Number(rows[0]?.backlog ?? 0);
}

async function eventsBacklog(baseUrl: string): Promise<number | undefined> {
  try {
    const response = await fetch(`${baseUrl}/actuator/health`);
    const body = (await response.json()) as {
      components?: { events?: { status?: string; details?: { backlog?: number } } };
    };
    const events = body.components?.events;
    return events?.status === 'UP' ? events.details?.backlog : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Polls the instance's health every 50 ms until its outbox backlog is 0 (everything numbered and confirmed by
 * the broker); answers when that was seen (`wallClockMs`), or undefined after `timeoutMs`.
 */
export async function publishedAt(service: RunningServer, timeoutMs: number): Promise<number | undefined> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if ((await eventsBacklog(service.baseUrl)) === 0) return wallClockMs();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

export interface RelayingService {
  readonly service: RunningServer;
  /** What earlier scenarios had left in the outbox, and how long the instance took to publish it from its start. */
  readonly drained: { readonly events: number; readonly seconds: number };
}

/**
 * A further instance of the service with AMQP_URL set, relaying the outbox to the run's exchange; resolves once
 * its relay is connected and the backlog (health's `events` component) is 0, so what earlier scenarios wrote is
 * published before anything is measured; with `waitForBacklog` false, as soon as it answers. `database` is another
 * database than the run's (scenario 17 has its own), `env` further settings of the instance.
 */
export async function startRelayingService(
  ctx: BenchContext,
  name: string,
  {
    timeoutMs = 600_000,
    waitForBacklog = true,
    database = ctx.db,
    env = {},
  }: {
    timeoutMs?: number;
    waitForBacklog?: boolean;
    database?: { url: string; pool: pg.Pool };
    env?: Record<string, string>;
  } = {},
): Promise<RelayingService> {
  const { config } = ctx;
  const exchangeName = benchExchange(config.amqpUrl);
  const backlog = await outboxBacklog(database.pool, exchangeName);
  const started = wallClockMs();
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: config.cpuProfile,
    main: config.serviceMain,
    env: { ...config.serviceEnv, ...env, AMQP_URL: config.amqpUrl, AMQP_EXCHANGE: exchangeName },
    name,
  });
  if (!waitForBacklog) return { service, drained: { events: 0, seconds: 0 } };
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if ((await eventsBacklog(service.baseUrl)) === 0) {
      return { service, drained: { events: backlog, seconds: (wallClockMs() - started) / 1000 } };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopProcess(service.process);
  throw new Error(`the relay of ${name} did not publish the outbox's ${backlog} events within ${timeoutMs / 1000} s`);
}

export async function stopEventsService(service: RunningServer): Promise<void> {
  await stopProcess(service.process);
}

/** One message as the bench's consumer saw it. */
export interface Delivery {
  readonly messageId: string | undefined;
  readonly correlationId: string | undefined;
  readonly routingKey: string;
  /** When the consumer's handler ran (`wallClockMs`). */
  readonly atMs: number;
}

export interface BenchConsumer {
  readonly deliveries: Delivery[];
  /** How often the consumer's channel was set up again (a broker restart or a lost connection disturbs the figures). */
  readonly resets: () => number;
  /** Resolves true once `predicate` holds, false after `timeoutMs`. */
  waitUntil(predicate: () => boolean, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A fresh exclusive queue bound to the exchange with `pattern`, drained by a consumer that acknowledges every
 * message (prefetch 1000), as a system bound to the service would. It records only the message's properties and
 * the time its handler ran; the body is parsed by rabbitmq-client as for any consumer.
 */
export async function consumeEvents(amqpUrl: string, exchangeName: string, pattern = '#'): Promise<BenchConsumer> {
  const queue = `inventory-bench-${randomUUID()}`;
  const connection = new Connection({ url: amqpUrl, connectionName: `bench consumer ${queue}`, retryLow: 200 });
  connection.on('error', () => undefined);
  const deliveries: Delivery[] = [];
  let ready = 0;
  const consumer = connection.createConsumer(
    {
      queue,
      queueOptions: { exclusive: true, autoDelete: true },
      // Declared as D28 has the service declare it, so binding does not depend on the relay having done it.
      exchanges: [{ exchange: exchangeName, type: 'topic', durable: true }],
      queueBindings: [{ queue, exchange: exchangeName, routingKey: pattern }],
      qos: { prefetchCount: 1000 },
    },
    (message) => {
      deliveries.push({
        messageId: message.messageId,
        correlationId: message.correlationId,
        routingKey: message.routingKey,
        atMs: wallClockMs(),
      });
    },
  );
  consumer.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the queue ${queue} was not bound within 10 s`)), 10_000);
    consumer.on('ready', () => {
      ready++;
      clearTimeout(timer);
      resolve();
    });
  });
  step(`consumer bound to ${exchangeName} (${pattern}) on ${brokerAddress(amqpUrl)}`);
  return {
    deliveries,
    resets: () => Math.max(0, ready - 1),
    async waitUntil(predicate, timeoutMs) {
      for (const deadline = Date.now() + timeoutMs; !predicate();) {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return true;
    },
    async close() {
      await consumer.close();
      await connection.close();
    },
  };
}

/** The p-th percentile of ascending values (nearest rank), as the load runs compute theirs. */
export function percentileOf(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Log lines at warn or above of a service's log, counted by message: the relay reports its trouble there. */
export async function logWarnings(name: string): Promise<string[]> {
  const file = path.join(RESULTS_DIR, `${name}.log`);
  if (!existsSync(file)) return [];
  const counts = new Map<string, number>();
  for await (const line of createInterface({ input: createReadStream(file) })) {
    const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
    if (level < 40) continue;
    const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 200);
    const key = `${level >= 50 ? 'error' : 'warn'}: ${message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([message, count]) => `${count} × ${message}`);
}
