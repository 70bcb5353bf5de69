import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import client from 'prom-client';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { onStopSignals } from './stop-signals.js';

/**
 * Issue 14: WEB_CONCURRENCY=N runs N worker processes on one port (node:cluster; the primary accepts and hands
 * connections round-robin). The primary serves nothing itself: it starts the embedded PostgreSQL when there is no
 * DATABASE_URL, forks the workers with a share of the pool each, replaces a worker that dies, collects the metrics of
 * all of them for whichever one is scraped, and on SIGTERM/SIGINT stops them all before the database.
 */
const METRICS_REQUEST = 'inventory:metrics-request';
const METRICS_REPLY = 'inventory:metrics-reply';
const SHUTDOWN = 'inventory:shutdown';

interface MetricsReply {
  readonly type: typeof METRICS_REPLY;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** The environment each worker starts with: the database the primary chose and its share of the pool. */
function workerEnvironment(config: Config, databaseUrl: string | undefined, secret: string | undefined) {
  return {
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(secret ? { AUTH_JWT_SECRET: secret } : {}),
    DB_POOL_MAX: String(Math.max(2, Math.ceil(config.db.poolMax / config.webConcurrency))),
  };
}

/** Runs the primary of WEB_CONCURRENCY workers until a signal (or failing workers) ends it. */
export async function runPrimary(config: Config, logger: Logger, secret: string | undefined): Promise<void> {
  let embedded: EmbeddedPostgres | undefined;
  if (!config.databaseUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
  }
  const environment = workerEnvironment(config, embedded?.url, secret);
  const workers = new Set<Worker>();
  // A worker that dies before it listens is failing to start (a bad setting, no database): the primary stops
  // instead of forking forever. One that dies later is replaced.
  const listening = new Set<Worker>();
  const fork = (): void => {
    workers.add(cluster.fork(environment));
  };

  const aggregator = new client.AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<{ type: typeof METRICS_REQUEST; id: number }>(message, METRICS_REQUEST)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_REPLY, id: message.id, text } satisfies MetricsReply),
      (error: Error) =>
        worker.send({ type: METRICS_REPLY, id: message.id, error: error.message } satisfies MetricsReply),
    );
  });

  let stopping = false;
  let exitCode = 0;
  const stopped = new Promise<void>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      workers.delete(worker);
      const started = listening.delete(worker);
      if (stopping) {
        if (code !== 0) exitCode = 1;
        if (workers.size === 0) resolve();
        return;
      }
      logger.error({ pid: worker.process.pid, code, signal }, 'a worker stopped unexpectedly');
      if (started) {
        fork();
      } else {
        exitCode = 1;
        stop('a worker failed to start');
      }
    });
  });

  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down the workers');
    if (workers.size === 0) return;
    for (const worker of workers) worker.send({ type: SHUTDOWN });
    // A worker ends itself within its shutdown deadline; one that does not is killed a little later.
    setTimeout(() => {
      for (const worker of workers) worker.process.kill('SIGKILL');
    }, config.shutdownTimeoutMs + 5_000).unref();
  };
  onStopSignals(logger, stop);

  let ready = false;
  cluster.on('listening', (worker) => {
    listening.add(worker);
    // A worker still starting when the stop began could not hear it yet.
    if (stopping) worker.send({ type: SHUTDOWN });
    if (!ready && listening.size === config.webConcurrency) {
      ready = true;
      logger.info({ port: config.port, workers: config.webConcurrency }, 'inventory service ready');
    }
  });
  for (let i = 0; i < config.webConcurrency; i++) fork();

  await stopped;
  await embedded?.stop();
  logger.info('stopped');
  process.exit(exitCode);
}

/** In a worker: calls `shutdown` when the primary asks for it. */
export function onShutdownRequest(shutdown: () => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isMessage(message, SHUTDOWN)) shutdown();
  });
}

/**
 * The text of /actuator/prometheus: this process's registry alone, or in a worker every worker's, summed by the
 * primary (gauges marked otherwise, such as the shared outbox backlog, are aggregated their own way).
 */
export function metricsOfInstance(registry: client.Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  // Constructing it makes this worker answer the primary's requests for its metrics.
  new client.AggregatorRegistry();
  client.AggregatorRegistry.setRegistries([registry]);
  let nextId = 0;
  const pending = new Map<number, (reply: MetricsReply) => void>();
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsReply>(message, METRICS_REPLY)) return;
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        if (pending.delete(id)) reject(new Error('the primary did not answer with the metrics'));
      }, 10_000);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        if (reply.text === undefined) reject(new Error(reply.error ?? 'no metrics'));
        else resolve(reply.text);
      });
      process.send!({ type: METRICS_REQUEST, id });
    });
}
