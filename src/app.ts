import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express, { type Express, type Request, type RequestHandler } from 'express';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { primaryReads, type ReadReplica } from './db/read-replica.js';
import { registerTypeParsers } from './db/type-parsers.js';
import { createIdempotency } from './idempotency/middleware.js';
import { createIdentity } from './auth/identity.js';
import { authenticate } from './http/auth.js';
import { errorHandler } from './http/error-handler.js';
import { addIndexRoutes } from './http/index-routes.js';
import { createMetrics } from './http/metrics.js';
import { addOperatorRoutes, buildApiDocument } from './http/operator-routes.js';
import { checkHost } from './http/host.js';
import { compress } from './http/compress.js';
import { cors } from './http/cors.js';
import { inSequence } from './http/in-sequence.js';
import { PUBLIC_BASE_URL } from './http/links.js';
import { literalBrokenEscapes } from './http/path-escapes.js';
import { requestContext } from './http/request-context.js';
import { Routes } from './http/routing.js';
import { JsonArrayStreams } from './http/stream.js';
import { OutgoingStreams } from './http/stream-writer.js';
import { StreamedImports } from './http/streamed-imports.js';
import { serverSpans } from './tracing/server-spans.js';
import { methodNotAllowed, routeNotFound } from './http/server-error.js';
import { addAllocationRoutes } from './allocation/routes.js';
import { addBrowserRoutes } from './browser/routes.js';
import { addFeedRoutes } from './events/feed-routes.js';
import type { EventsRuntime } from './events/runtime.js';
import type { AddFeatureRoutes } from './http/feature.js';
import { addLoadUnitRoutes } from './load-units/routes.js';
import { addMasterDataRoutes } from './master-data/routes.js';
import { addMoveRoutes } from './packaging-units/move-routes.js';
import { addPackagingUnitRoutes } from './packaging-units/routes.js';
import { addPackagingUnitKeyRoutes } from './packaging-units/unit-routes.js';
import { addProductRoutes } from './products/routes.js';
import { addReservationRoutes } from './reservations/routes.js';
import { addStockRoutes } from './stock/routes.js';

const FEATURES: readonly AddFeatureRoutes[] = [
  addProductRoutes,
  addMasterDataRoutes,
  addLoadUnitRoutes,
  addMoveRoutes,
  addPackagingUnitRoutes,
  addPackagingUnitKeyRoutes,
  addAllocationRoutes,
  addReservationRoutes,
  addStockRoutes,
  addFeedRoutes,
  addBrowserRoutes,
];

export interface AppDependencies {
  readonly config: Config;
  readonly pool: pg.Pool;
  readonly logger: Logger;
  /** Numbering, publishing and the feed's wake-ups; started by main (or a test) and stopped with the pool. */
  readonly events: EventsRuntime;
  /** Issue 17 (DATABASE_READ_URL): without one, every read goes to `pool`. */
  readonly readReplica?: ReadReplica;
  /** D36: true once shutdown has started, so readiness turns 503 while in-flight requests finish. */
  readonly isDraining?: () => boolean;
  /** D39: aborts when shutdown starts: open event streams end then, long polls answer. */
  readonly stopping?: AbortSignal;
}

// A retry that meets its original still running waits this long for it before answering 409.
const IDEMPOTENT_RETRY_WAIT_MS = 30_000;

// Browsers ask for /favicon.ico by themselves: the 404 handler answers it, not a 401 in every console (issue 16).
const PUBLIC_PATHS = new Set([
  '/index',
  '/actuator/health',
  '/actuator/health/liveness',
  '/actuator/health/readiness',
  '/v3/api-docs',
  '/swagger-ui',
  '/favicon.ico',
  // Issue 27: the stock browser's page; it asks its user for a token.
  '/browser',
]);

/** D5: only these reads are open without a token. */
function isPublic(req: Request): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.replace(/\/+$/, '') : req.path;
  return PUBLIC_PATHS.has(path) || path.startsWith('/swagger-ui/') || path.startsWith('/browser/');
}

/** D41: reads that follow a write of this instance see it, so the replica learns when writes start and end. */
function fenceWrites(readReplica: ReadReplica): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    readReplica.writeStarted();
    // 'close' comes after 'finish' and also when the client went away first: each write ends once.
    res.once('close', () => readReplica.writeEnded());
    next();
  };
}

/** The whole HTTP application without a listening socket (what the tests drive through supertest). */
export function createApp({
  config,
  pool,
  logger,
  events,
  readReplica,
  isDraining = () => false,
  stopping,
}: AppDependencies): Express {
  registerTypeParsers();
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set(PUBLIC_BASE_URL, config.publicBaseUrl);
  app.set('etag', false);

  const identity = createIdentity(config.auth, {
    onProblem: (message, error) => logger.warn({ err: error }, message),
  });
  const registry = new OpenAPIRegistry();
  const idempotency = createIdempotency({
    pool,
    ttlSeconds: config.idempotencyTtlSeconds,
    waitMs: IDEMPOTENT_RETRY_WAIT_MS,
  });
  const routes = new Routes(config.bodies, { registry, idempotency, requiredScopes: config.auth.requiredScopes });
  const routeOf = (req: Request): string | undefined => routes.routeOf(req);
  const metrics = createMetrics(pool, routeOf);
  events.registerMetrics(metrics.registry);
  readReplica?.registerMetrics(metrics.registry);
  const reads = readReplica ?? primaryReads(pool);
  const outgoing = new OutgoingStreams(config.streams, metrics.registry, stopping);
  const streams = new JsonArrayStreams(config.streams, metrics.registry, outgoing);
  const imports = new StreamedImports(config.bodies, config.http.requestTimeoutMs);
  let apiDocument: object | undefined;

  // First, so that everything after it, the access log among it, runs within the request's span.
  if (config.tracing) app.use(serverSpans(routeOf));
  app.use(
    inSequence(
      requestContext(logger, { traced: config.tracing }),
      ...(readReplica ? [fenceWrites(readReplica)] : []),
      literalBrokenEscapes,
      metrics.observeRequests,
      (_req, res, next) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        next();
      },
      cors(config.corsAllowedOrigins, (path) => routes.allowedMethods(path)),
      checkHost({ allowedHosts: config.allowedHosts, publicBaseUrl: config.publicBaseUrl, listenHost: config.host }),
      compress(config.compressionLevel),
      authenticate(identity, isPublic),
    ),
  );

  addIndexRoutes(routes);
  for (const addFeatureRoutes of FEATURES)
    addFeatureRoutes(routes, { pool, reads, config, events, streams, outgoing, logger, imports });
  addOperatorRoutes(
    app,
    routes,
    pool,
    events,
    metrics,
    () => (apiDocument ??= buildApiDocument(registry)),
    isDraining,
    readReplica,
    () => identity.ready,
  );
  app.use(routes.router);

  app.use((req, _res, next) => {
    const allowed = routes.allowedMethods(req.path);
    if (allowed.length === 0) return next(routeNotFound(req.method, req.path));
    next(methodNotAllowed(req.method, allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed));
  });
  app.use(errorHandler);
  return app;
}
