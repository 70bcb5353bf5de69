import pg from 'pg';
import type { Logger } from 'pino';
import client from 'prom-client';
import type { Config } from '../config.js';
import { withTransaction } from '../db/tx.js';
import { probeConnection } from '../db/pool.js';
import { FeedSignal } from './feed-signal.js';
import { FeedListener } from './listener.js';
import { EventRelay, type BrokerState } from './relay.js';
import { Sequencer } from './sequencer.js';
import { pruneOutbox } from './retention.js';
import { selectBacklog, type Backlog } from './sql.js';

const PRUNE_EVERY_MS = 5 * 60_000;
const HEALTH_QUERY_TIMEOUT_MS = 2000;

/** The `events` component of `/actuator/health` (D28), present when publishing is configured. */
export interface EventsHealth {
  status: 'UP' | 'DOWN';
  details: {
    exchange: string;
    broker: BrokerState;
    backlog?: number;
    oldestUnsentAgeSeconds?: number;
  };
}

/** The background side of events in one process: numbering, listening, publishing and pruning. */
export interface EventsRuntime {
  readonly signal: FeedSignal;
  /** Undefined without AMQP_URL: nothing is published, and health has no `events` component. */
  health(): Promise<EventsHealth | undefined>;
  registerMetrics(registry: client.Registry): void;
  stop(): Promise<void>;
}

function backlogOf(pool: pg.Pool, exchange: string): Promise<Backlog> {
  return withTransaction(pool, (tx) => selectBacklog(tx, exchange), { readOnly: true });
}

/** Seconds since the instant, 0 without one. */
function ageSeconds(since: Date | null): number {
  return since ? Math.max(0, (Date.now() - since.getTime()) / 1000) : 0;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

// Numbering and publishing run on connections of their own: queued behind requests in the request pool, an event
// would wait for the load to pass before it reached the feed or the broker.
const BACKGROUND_CONNECTIONS = 2;
// Longer than any probe or scrape interval, so the backlog's connection stays open between them.
const HEALTH_IDLE_MS = 60_000;

/** A small pool beside the requests' one, to the same database with the same settings. */
function backgroundPool(pool: pg.Pool, logger: Logger): pg.Pool {
  const background = new pg.Pool({
    ...(pool.options as pg.PoolConfig),
    max: BACKGROUND_CONNECTIONS,
    application_name: 'inventory-service-events',
  });
  background.on('error', (error) => logger.warn({ err: error }, 'idle events connection failed; it was discarded'));
  background.on('connect', (client) => {
    client.on('error', (error) => logger.warn({ err: error }, 'events connection failed while in use'));
  });
  return background;
}

/**
 * The backlog's one connection (issue 37): on the events pool it waited behind numbering runs, which hold a
 * connection each for as long as a run (5,000 to 20,000 events) takes while a bulk load is numbered.
 */
function backlogPool(pool: pg.Pool): pg.Pool {
  // A lost idle connection is what the next reading finds out; health then reports no backlog.
  return probeConnection(pool, {
    timeoutMs: HEALTH_QUERY_TIMEOUT_MS,
    idleMs: HEALTH_IDLE_MS,
    applicationName: 'inventory-service-health',
  });
}

/**
 * `sessionPool` gives the listener's connection: LISTEN needs a session, which a transaction pooler in front of the
 * request pool does not keep (issue 17). The background pool goes where the requests go: it only runs transactions.
 */
export function startEvents(
  requestPool: pg.Pool,
  config: Config,
  logger: Logger,
  sessionPool: pg.Pool = requestPool,
): EventsRuntime {
  const pool = backgroundPool(requestPool, logger);
  const signal = new FeedSignal();
  const sequencer = new Sequencer(pool, signal, logger, config.events.partitionSize);
  const listener = new FeedListener(sessionPool.options as pg.ClientConfig, signal, logger);
  let publishedTotal: client.Counter | undefined;
  const { amqpUrl, exchange, retentionHours } = config.events;
  const relay = amqpUrl
    ? new EventRelay(pool, { url: amqpUrl, exchange }, signal, logger, (count) => publishedTotal?.inc(count))
    : undefined;

  const backlogConnection = backlogPool(requestPool);
  // Health and both gauges share one reading at a time: a flood of probes and a scrape cost one statement.
  let reading: Promise<Backlog | undefined> | undefined;
  const readBacklog = (): Promise<Backlog | undefined> =>
    (reading ??= withTimeout(backlogOf(backlogConnection, exchange), HEALTH_QUERY_TIMEOUT_MS).finally(() => {
      reading = undefined;
    }));

  let pruning = false;
  const prune = (): void => {
    if (pruning) return;
    pruning = true;
    const cutoff = new Date(Date.now() - retentionHours * 3_600_000);
    pruneOutbox(pool, cutoff, relay ? exchange : undefined)
      .then((removed) => {
        if (removed > 0) logger.info({ removed, retentionHours }, 'removed events past their retention');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'removing old events failed'))
      .finally(() => {
        pruning = false;
      });
  };
  const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
  pruneTimer.unref();

  return {
    signal,
    async health() {
      if (!relay) return undefined;
      const backlog = await readBacklog();
      const broker = relay.brokerState;
      return {
        status: broker === 'connected' ? 'UP' : 'DOWN',
        details: {
          exchange,
          broker,
          ...(backlog && {
            backlog: backlog.count,
            oldestUnsentAgeSeconds: ageSeconds(backlog.oldestUnsentAt),
          }),
        },
      };
    },
    registerMetrics(registry) {
      if (!relay) return;
      publishedTotal = new client.Counter({
        name: 'inventory_events_published_total',
        help: 'Events this instance published to the broker and the broker confirmed',
        registers: [registry],
      });
      new client.Gauge({
        name: 'inventory_events_outbox_backlog',
        help: 'Events committed but not yet published to the broker (all instances)',
        registers: [registry],
        // Every worker of an instance reads the same shared count.
        aggregator: 'max',
        async collect() {
          const backlog = await readBacklog();
          if (backlog) this.set(backlog.count);
        },
      });
      new client.Gauge({
        name: 'inventory_events_oldest_unsent_age_seconds',
        help: 'How long the oldest event not yet published has waited (0 without a backlog; all instances)',
        registers: [registry],
        aggregator: 'max',
        async collect() {
          const backlog = await readBacklog();
          if (backlog) this.set(ageSeconds(backlog.oldestUnsentAt));
        },
      });
    },
    async stop() {
      clearInterval(pruneTimer);
      await Promise.all([sequencer.stop(), listener.stop(), relay?.stop()]);
      await Promise.all([pool.end(), backlogConnection.end()]);
    },
  };
}
