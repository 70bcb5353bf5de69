import { createRequire } from 'node:module';
import path from 'node:path';
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express, { type Express, type Request, type Response } from 'express';
import type pg from 'pg';
import type { ReadReplica } from '../db/read-replica.js';
import type { EventsRuntime } from '../events/runtime.js';
import { body, declareOptionalBodies } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { databaseProbe } from './database-probe.js';
import { JSON_TYPE } from './media-types.js';
import { PREFLIGHT_TAG, sharePreflightDeclarations } from './preflight-doc.js';
import type { Metrics } from './metrics.js';
import type { Routes } from './routing.js';

const SWAGGER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Inventory Service API</title>
<link rel="icon" type="image/png" href="/swagger-ui/assets/favicon-32x32.png">
<link rel="stylesheet" href="/swagger-ui/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger-ui/assets/swagger-ui-bundle.js"></script>
<script src="/swagger-ui/explorer.js"></script>
</body>
</html>
`;

// Kept in its own file so the page's Content-Security-Policy can forbid inline scripts.
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({ url: '/v3/api-docs', dom_id: '#swagger-ui', deepLinking: true });\n`;

export const HTML_SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** Every tag an operation names, described for the document's readers (the lint wants each described). */
const TAGS = [
  { name: 'Index', description: 'Entry points: HAL links to every operation (D7)' },
  { name: 'Products', description: 'Products and their units of measure' },
  { name: 'LoadUnits', description: 'The LoadUnits a TransportUnit is divided into' },
  { name: 'PackagingUnits', description: 'Stock: PackagingUnits on Locations and in LoadUnits' },
  {
    name: 'PackagingUnits: moves',
    description: 'Moving PackagingUnits and quantities between Locations and LoadUnits',
  },
  { name: 'Master data', description: 'LocationGroups, Locations and TransportUnits the stock lies on' },
  { name: 'Allocation', description: 'Reserving stock for picking and releasing reservations' },
  { name: 'Events', description: 'The change feed of stock events (D29)' },
  { name: 'Operations', description: 'Health, metrics and this document (D25)' },
  { name: PREFLIGHT_TAG, description: 'Preflights of browser pages on the origins in CORS_ALLOWED_ORIGINS (D33)' },
];

export function buildApiDocument(registry: OpenAPIRegistry): object {
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Inventory Service API',
      version: '1.0.0',
      description: 'Products, LoadUnits, PackagingUnits, moves and allocation of a warehouse inventory.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: the document describes the instance that serves it, wherever it is deployed.
    servers: [{ url: '/', description: 'This instance' }],
    security: [{ bearerAuth: [] }],
    tags: TAGS,
  });
  declareOptionalBodies(document);
  sharePreflightDeclarations(document);
  return document;
}

/** D25's health body; `components.events` only with AMQP_URL (D28). */
const healthSchema = z
  .object({
    status: z.enum(['UP', 'DOWN']).openapi({ description: 'DOWN when the database is unreachable' }),
    components: z
      .object({
        readReplica: z
          .object({
            status: z
              .enum(['UP', 'DOWN'])
              .openapi({ description: 'DOWN while the replica does not answer as a standby' }),
            details: z
              .object({
                reads: z.enum(['replica', 'primary']).openapi({ description: 'Where reads that may go to it go now' }),
                state: z.enum(['unmeasured', 'current', 'lagging', 'unreachable', 'not a standby']),
                lagMs: z
                  .number()
                  .int()
                  .optional()
                  .openapi({ description: 'How far behind the primary, last measured' }),
                maxLagMs: z.number().int(),
              })
              .strict(),
          })
          .strict()
          .optional(),
        events: z
          .object({
            status: z.enum(['UP', 'DOWN']).openapi({ description: 'DOWN while the broker is unreachable or refuses' }),
            details: z
              .object({
                exchange: z.string(),
                broker: z.enum(['connected', 'unreachable', 'refusing']),
                backlog: z.number().int().optional().openapi({ description: 'Events not published yet' }),
                oldestUnsentAgeSeconds: z.number().optional(),
              })
              .strict(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .openapi('Health');

const OPERATIONS = ['Operations'];

const probeSchema = z
  .object({ status: z.enum(['UP']) })
  .strict()
  .openapi('LivenessState');
const readinessSchema = z
  .object({
    status: z.enum(['UP', 'DOWN', 'OUT_OF_SERVICE']).openapi({
      description: 'DOWN without the database; OUT_OF_SERVICE once shutdown has started',
    }),
  })
  .strict()
  .openapi('ReadinessState');

/** D25: health (public), Prometheus metrics, the OpenAPI document (public) and the API explorer (public). */
export function addOperatorRoutes(
  app: Express,
  routes: Routes,
  pool: pg.Pool,
  events: EventsRuntime,
  metrics: Metrics,
  apiDocument: () => object,
  isDraining: () => boolean,
  readReplica?: ReadReplica,
  identityIsReady: () => boolean = () => true,
): void {
  const databaseIsUp = databaseProbe(pool);
  routes.add({
    method: 'GET',
    path: '/actuator/health',
    produces: [JSON_TYPE],
    handler: async (_req: Request, res: Response) => {
      const [up, eventsHealth] = await Promise.all([databaseIsUp(), events.health()]);
      // D28: a broker that is down shows in its component; the service itself stays UP. So does a read replica that
      // is down (issue 17): the primary serves its reads meanwhile.
      const parts = {
        ...(readReplica && { readReplica: readReplica.health() }),
        ...(eventsHealth && { events: eventsHealth }),
      };
      const components = Object.keys(parts).length > 0 ? { components: parts } : {};
      res.status(up ? 200 : 503).json({ status: up ? 'UP' : 'DOWN', ...components });
    },
    doc: {
      operationId: 'health',
      tags: OPERATIONS,
      summary: 'Liveness, database reachability and (with AMQP_URL) the event relay',
      public: true,
      responses: {
        200: body('UP: the database answers', healthSchema, [JSON_TYPE]),
        503: body('DOWN: the database is unreachable', healthSchema, [JSON_TYPE]),
      },
    },
  });
  // D36, named as Spring Boot names them: liveness never asks the database, so an outage restarts no pod.
  routes.add({
    method: 'GET',
    path: '/actuator/health/liveness',
    produces: [JSON_TYPE],
    handler: (_req: Request, res: Response) => {
      res.status(200).json({ status: 'UP' });
    },
    doc: {
      operationId: 'health-liveness',
      tags: OPERATIONS,
      summary: 'Liveness probe: the process can serve (the database is not asked)',
      public: true,
      responses: { 200: body('UP', probeSchema, [JSON_TYPE]) },
    },
  });
  // The server listens only once migrations are applied, so an answering database is what remains to ask.
  routes.add({
    method: 'GET',
    path: '/actuator/health/readiness',
    produces: [JSON_TYPE],
    handler: async (_req: Request, res: Response) => {
      if (isDraining()) return void res.status(503).json({ status: 'OUT_OF_SERVICE' });
      // D37: until the identity provider's keys were read once, every token would be refused.
      const up = identityIsReady() && (await databaseIsUp());
      res.status(up ? 200 : 503).json({ status: up ? 'UP' : 'DOWN' });
    },
    doc: {
      operationId: 'health-readiness',
      tags: OPERATIONS,
      summary:
        "Readiness probe: the database answers, the identity provider's keys were read, and the service is not shutting down",
      public: true,
      responses: {
        200: body('UP: ready for traffic', readinessSchema, [JSON_TYPE]),
        503: body(
          "DOWN without the database or before the identity provider's keys were first read, OUT_OF_SERVICE while shutting down",
          readinessSchema,
          [JSON_TYPE],
        ),
      },
    },
  });
  routes.add({
    method: 'GET',
    path: '/actuator/prometheus',
    produces: ['text/plain', 'application/openmetrics-text'],
    handler: async (_req: Request, res: Response) => {
      res
        .status(200)
        .type(metrics.registry.contentType)
        .send(await metrics.text());
    },
    doc: {
      operationId: 'prometheus',
      tags: OPERATIONS,
      summary: 'Metrics in the Prometheus text format',
      // A scraper that prefers OpenMetrics is accepted and gets the text format, which it also reads.
      responses: { 200: body('The metrics, text format 0.0.4', z.string(), ['text/plain']) },
    },
  });
  routes.add({
    method: 'GET',
    path: '/v3/api-docs',
    produces: [JSON_TYPE],
    handler: (_req: Request, res: Response) => {
      res.status(200).json(apiDocument());
    },
    doc: {
      operationId: 'api-docs',
      tags: OPERATIONS,
      summary: 'This OpenAPI document',
      public: true,
      responses: {
        200: body('The OpenAPI 3.1 document', z.record(z.string(), z.unknown()), [JSON_TYPE]),
      },
    },
  });
  routes.add({
    method: 'GET',
    path: '/swagger-ui',
    produces: ['text/html'],
    handler: (_req: Request, res: Response) => {
      res.set(HTML_SECURITY_HEADERS).status(200).type('text/html').send(SWAGGER_PAGE);
    },
    doc: {
      operationId: 'swagger-ui',
      tags: OPERATIONS,
      summary: 'The API explorer (Swagger UI) on this document',
      public: true,
      responses: { 200: body('The explorer page', z.string(), ['text/html']) },
    },
  });
  routes.add({
    method: 'GET',
    path: '/swagger-ui/explorer.js',
    handler: (_req: Request, res: Response) => {
      res.status(200).type('application/javascript').send(SWAGGER_INIT);
    },
    doc: {
      operationId: 'swagger-ui-explorer-script',
      tags: OPERATIONS,
      summary: "The explorer page's start script",
      public: true,
      hidden: true,
      responses: { 200: body('The script', z.string(), ['application/javascript']) },
    },
  });
  const assets = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  app.use('/swagger-ui/assets', express.static(assets, { index: false, fallthrough: true, maxAge: '1d' }));
}
