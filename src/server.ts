import cluster from 'node:cluster';
import net from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { onShutdownRequest, runPrimary } from './cluster.js';
import { loadConfigOrExit } from './command-line.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { openReadReplica } from './db/read-replica.js';
import { publicKeyOf } from './auth/fixed-keys.js';
import { answerClientErrors } from './http/client-errors.js';
import { startEvents, type EventsRuntime } from './events/runtime.js';
import { HistoryRetention } from './history/retention.js';
import { ReservationExpiry } from './reservations/expiry.js';
import { drainOnShutdown, type Draining } from './http/draining.js';
import { deleteExpiredRecords } from './idempotency/sql.js';
import { readOrCreateDevelopmentSecret, signDevelopmentToken } from './http/dev-token.js';
import { createLogger } from './logger.js';
import { onStopSignals } from './stop-signals.js';
import { shutdownTracing } from './tracing/shutdown.js';

const DEVELOPMENT_TOKEN_SECONDS = 12 * 3600;

/** D26: without a configured key, development gets a persistent secret under DATA_DIR and a ready token. */
async function resolveAuth(config: Config, logger: Logger): Promise<Config> {
  const { publicKey, jwksUrl, oidcIssuerUrl } = config.auth;
  if (config.auth.secret || publicKey || jwksUrl || oidcIssuerUrl) return config;
  const secret = await readOrCreateDevelopmentSecret(config.dataDir);
  const token = signDevelopmentToken(secret, {
    subject: 'developer',
    expiresInSeconds: DEVELOPMENT_TOKEN_SECONDS,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  });
  logger.warn(
    { secretFile: `${config.dataDir}/jwt-secret` },
    'no AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY configured: using a development secret (never do this in production)',
  );
  logger.warn(`development token (valid 12 h): export TOKEN=${token}`);
  return Object.freeze({ ...config, auth: Object.freeze({ ...config.auth, secret }) });
}

function listen(server: Server, config: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

const PRIMARY_REQUEST = 'the primary process';

// Long enough for a request already on its way over a kept connection to arrive; short against any deadline.
const IDLE_CONNECTION_GRACE_MS = 1000;

/**
 * Stop accepting, let in-flight requests finish until the deadline (each connection closing after its current
 * request), then close the pool and the embedded database. A second signal ends the process at once (D36: not
 * the echo of the first that npm passes on).
 */
function installShutdown(
  server: Server,
  draining: Draining,
  events: EventsRuntime,
  history: HistoryRetention,
  expiry: ReservationExpiry,
  database: Database,
  config: Config,
  logger: Logger,
): void {
  let shuttingDown = false;
  const shutdown = (signal: string): void => {
    // A worker stopped by Ctrl-C also hears its primary ask it to stop.
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const deadline = setTimeout(() => {
      logger.warn('shutdown deadline reached: closing the remaining connections');
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    deadline.unref();
    draining.start();
    // http.Server#close would at once destroy every kept-alive connection it finds idle, including one whose next
    // request has arrived but is not read yet: that request would get no answer (issue 15). Only the listener is
    // closed now; a kept connection ends after its next answer (Connection: close), and one that stays idle for the
    // grace period is closed then, as its keep-alive timeout would have.
    const idleGrace = setTimeout(() => server.closeIdleConnections(), IDLE_CONNECTION_GRACE_MS);
    idleGrace.unref();
    net.Server.prototype.close.call(server, () => {
      clearTimeout(idleGrace);
      clearTimeout(deadline);
      // The expiry worker and the relay finish their batch (the relay gives up its lease), and the history its
      // run, before the pool closes under them.
      logger.info('connections closed: stopping the background work');
      Promise.all([expiry.stop(), events.stop(), history.stop()])
        .catch((error: unknown) => logger.warn({ err: error }, 'stopping the background work failed'))
        .then(() => logger.info('background work stopped: closing the database'))
        .then(() => database.close())
        // The spans of the last requests are still buffered (D36).
        .then(() => shutdownTracing())
        .then(() => {
          logger.info('stopped');
          process.exit(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'stopping the database failed');
          process.exit(1);
        });
    });
  };
  onStopSignals(logger, shutdown);
  onShutdownRequest(() => shutdown(PRIMARY_REQUEST));
  watchSupervisingNpm(() => shutdown('npm exited'));
}

/**
 * Under `npm start`, npm is the supervisor: if it dies without passing a signal on (SIGKILL), the service
 * would live on as an orphan holding its port and database. Started any other way, nothing is watched.
 */
function watchSupervisingNpm(onOrphaned: () => void): void {
  if (process.env.npm_lifecycle_event !== 'start') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onOrphaned();
    }
  }, 1000);
  timer.unref();
}

const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

/** Expired idempotency records are deleted in the background; a lookup ignores them meanwhile. */
function sweepExpiredIdempotencyRecords(database: Database, logger: Logger): void {
  const timer = setInterval(() => {
    deleteExpiredRecords(database.pool).catch((error: unknown) =>
      logger.warn({ err: error }, 'deleting expired idempotency records failed'),
    );
  }, IDEMPOTENCY_SWEEP_MS);
  timer.unref();
}

async function main(): Promise<void> {
  let config = loadConfigOrExit();
  const logger = createLogger(config);
  let database: Database | undefined;
  const fail = (error: unknown): void => {
    logger.fatal({ err: error }, 'the service stopped after an unexpected error');
    const stop = database ? database.close() : Promise.resolve();
    stop.finally(() => process.exit(1));
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);

  try {
    config = await resolveAuth(config, logger);
    if (config.webConcurrency > 1 && cluster.isPrimary) {
      await runPrimary(config, logger, config.auth.secret);
      return;
    }
    if (config.env === 'production' && !config.publicBaseUrl && !config.allowedHosts) {
      logger.warn(
        'neither PUBLIC_BASE_URL nor ALLOWED_HOSTS is set: only localhost, loopback and the listening address are answered',
      );
    }
    // A key the service cannot verify with stops the start here, before any database is opened. A provider's
    // keys are read in the background: a provider that is briefly down must not keep the service from starting.
    if (config.auth.publicKey) publicKeyOf(config.auth.publicKey);
    database = await openDatabase(config, logger);
    await migrate(database.sessionPool, logger);
    const readReplica =
      config.readReplica && (await openReadReplica(database.pool, config.db, config.readReplica, logger));
    if (readReplica) {
      const primary = database;
      database = {
        ...primary,
        close: async () => {
          await readReplica
            .close()
            .catch((error: unknown) => logger.warn({ err: error }, 'closing the replica failed'));
          await primary.close();
        },
      };
    }
    const history = new HistoryRetention(database.pool, config.history, logger);
    // The ledger's part of this month must exist before the first stock change.
    await history.run();
    const events = startEvents(database.pool, config, logger, database.sessionPool);
    const expiry = new ReservationExpiry(database.pool, logger);
    // Slow or stalled clients must not hold sockets forever; bulk uploads still get minutes by default.
    const server = createServer({
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      keepAliveTimeout: config.http.keepAliveTimeoutMs,
      // How often Node checks those timeouts; its default (30 s) would let short timeouts run long.
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
    });
    answerClientErrors(server, logger);
    const draining = drainOnShutdown(server);
    const app = createApp({
      config,
      pool: database.pool,
      logger,
      events,
      readReplica,
      isDraining: () => draining.started,
      stopping: draining.signal,
    });
    server.on('request', app);
    await listen(server, config);
    installShutdown(server, draining, events, history, expiry, database, config, logger);
    sweepExpiredIdempotencyRecords(database, logger);
    logger.info({ port: config.port, database: database.description }, 'inventory service ready');
  } catch (error) {
    fail(error);
  }
}

void main();
