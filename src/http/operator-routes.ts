import { createRequire } from 'node:module';
import path from 'node:path';
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express, { type Express, type Request, type Response } from 'express';
import type pg from 'pg';
import type { EventsRuntime } from '../events/runtime.js';
import type { Metrics } from './metrics.js';
import type { Routes } from './routing.js';

const HEALTH_QUERY_TIMEOUT_MS = 2000;

async function databaseIsUp(pool: pg.Pool): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_QUERY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([pool.query('SELECT 1').then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const SWAGGER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Inventory Service API</title>
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

const HTML_SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

export function buildApiDocument(registry: OpenAPIRegistry): object {
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Inventory Service API',
      version: '1.0.0',
      description: 'Products, LoadUnits, PackagingUnits, moves and allocation of a warehouse inventory.',
    },
    security: [{ bearerAuth: [] }],
  });
}

/** D25: health (public), Prometheus metrics, the OpenAPI document (public) and the API explorer (public). */
export function addOperatorRoutes(
  app: Express,
  routes: Routes,
  pool: pg.Pool,
  events: EventsRuntime,
  metrics: Metrics,
  apiDocument: () => object,
): void {
  routes.add({
    method: 'GET',
    path: '/actuator/health',
    produces: ['application/json'],
    handler: async (_req: Request, res: Response) => {
      const [up, eventsHealth] = await Promise.all([databaseIsUp(pool), events.health()]);
      // D28: a broker that is down shows in its component; the service itself stays UP.
      const components = eventsHealth ? { components: { events: eventsHealth } } : {};
      res.status(up ? 200 : 503).json({ status: up ? 'UP' : 'DOWN', ...components });
    },
    doc: {
      tags: ['Operations'],
      summary: 'Liveness, database reachability and (with AMQP_URL) the event relay',
      security: [],
      responses: { 200: { description: 'UP' }, 503: { description: 'DOWN: the database is unreachable' } },
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
        .send(await metrics.registry.metrics());
    },
    doc: {
      tags: ['Operations'],
      summary: 'Metrics in the Prometheus text format',
      responses: { 200: { description: 'Metrics' } },
    },
  });
  routes.add({
    method: 'GET',
    path: '/v3/api-docs',
    produces: ['application/json'],
    handler: (_req: Request, res: Response) => {
      res.status(200).json(apiDocument());
    },
  });
  routes.add({
    method: 'GET',
    path: '/swagger-ui',
    produces: ['text/html'],
    handler: (_req: Request, res: Response) => {
      res.set(HTML_SECURITY_HEADERS).status(200).type('text/html').send(SWAGGER_PAGE);
    },
  });
  routes.add({
    method: 'GET',
    path: '/swagger-ui/explorer.js',
    handler: (_req: Request, res: Response) => {
      res.status(200).type('application/javascript').send(SWAGGER_INIT);
    },
  });
  const assets = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  app.use('/swagger-ui/assets', express.static(assets, { index: false, fallthrough: true, maxAge: '1d' }));
}
