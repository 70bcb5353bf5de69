import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { startEvents } from '../../src/events/runtime.js';
import { testConfig, useTestApp } from '../support/app.js';
import { expectServerDeclined, JSON_UTF8 } from '../support/http.js';
import { closedPort } from '../support/ports.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();

interface OpenApiDocument {
  openapi: string;
  info: { title: string };
  security?: Record<string, string[]>[];
  components?: { securitySchemes?: Record<string, unknown> };
  paths: Record<string, Record<string, { security?: unknown[] }>>;
}

/** Every `route="…"` label value of the request-duration histogram. */
function routeLabels(metrics: string): string[] {
  const labels = [...metrics.matchAll(/^http_server_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)];
  return [...new Set(labels.map((match) => match[1] ?? ''))];
}

describe('GET /actuator/health', () => {
  it('answers 200 {"status":"UP"} without a token', async () => {
    const response = await request(ctx.app).get('/actuator/health');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toStrictEqual({ status: 'UP' });
  });

  it('answers 503 {"status":"DOWN"} when the database cannot be reached', async () => {
    const unreachable = new pg.Pool({
      connectionString: `postgres://nobody:nothing@127.0.0.1:${await closedPort()}/none`,
      connectionTimeoutMillis: 1000,
    });
    const logger = pino({ level: 'silent' });
    const events = startEvents(unreachable, testConfig(), logger);
    try {
      const app = createApp({ config: testConfig(), pool: unreachable, logger, events });
      const response = await request(app).get('/actuator/health');
      expect(response.status).toBe(503);
      expect(response.headers['content-type']).toBe(JSON_UTF8);
      expect(response.body).toStrictEqual({ status: 'DOWN' });
    } finally {
      await events.stop();
      await unreachable.end();
    }
  });
});

describe('GET /actuator/prometheus', () => {
  it('needs a token', async () => {
    const response = await request(ctx.app).get('/actuator/prometheus');
    expectServerDeclined(response, {
      status: 401,
      error: 'Unauthorized',
      exception: 'AuthenticationCredentialsNotFoundException',
      message: /authentication is required/i,
      path: '/actuator/prometheus',
    });
  });

  it('serves the Prometheus text format with request durations by route pattern and pool gauges', async () => {
    const pKey = randomUUID();
    await request(ctx.app).get('/v1/products/index').set('Authorization', bearer());
    await request(ctx.app).get(`/v1/products/${pKey}`).set('Authorization', bearer());
    await request(ctx.app).get(`/v1/no-such-thing/${pKey}`).set('Authorization', bearer());

    const response = await request(ctx.app).get('/actuator/prometheus').set('Authorization', bearer());
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
    const text = response.text;
    expect(text).toContain('# TYPE http_server_request_duration_seconds histogram');
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{method="GET",route="\/v1\/products\/index",status="200"\} 1$/m,
    );
    // A raw id in a label would give every product its own time series.
    expect(text).not.toContain(pKey);
    for (const route of routeLabels(text)) expect(route).toMatch(/^(\/[\w\-.:{}]*)+$|^unmatched$/);
    for (const gauge of ['db_pool_connections', 'db_pool_connections_idle', 'db_pool_requests_waiting']) {
      expect(text).toContain(`# TYPE ${gauge} gauge`);
      expect(text).toMatch(new RegExp(`^${gauge} \\d+$`, 'm'));
    }
  });

  it('labels a request to a route with a path variable by the pattern, not the value', async () => {
    const pKey = randomUUID();
    const probe = await request(ctx.app).get(`/v1/products/${pKey}`).set('Authorization', bearer());
    expect(probe.status).toBe(404);
    const response = await request(ctx.app).get('/actuator/prometheus').set('Authorization', bearer());
    expect(response.text).toMatch(
      /^http_server_request_duration_seconds_count\{method="GET",route="\/v1\/products\/:pKey",status="404"\} \d+$/m,
    );
  });
});

describe('GET /actuator/prometheus: answers given before routing (issue 16)', () => {
  async function metricsText(): Promise<string> {
    return (await request(ctx.app).get('/actuator/prometheus').set('Authorization', bearer())).text;
  }

  it('labels a 401 by the pattern of the route it was for, apart from a 401 on a path no route has', async () => {
    expect((await request(ctx.app).get(`/v1/products/${randomUUID()}`)).status).toBe(401);
    expect((await request(ctx.app).get('/wp-login.php')).status).toBe(401);
    const text = await metricsText();
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{method="GET",route="\/v1\/products\/:pKey",status="401"\} \d+$/m,
    );
    expect(text).toMatch(
      /^http_server_request_duration_seconds_count\{method="GET",route="unmatched",status="401"\} \d+$/m,
    );
  });

  it('labels a 405 by the pattern of the path, whose routes have other methods', async () => {
    const refused = await request(ctx.app).patch('/v1/products/index').set('Authorization', bearer());
    expect(refused.status).toBe(405);
    expect(await metricsText()).toMatch(
      /^http_server_request_duration_seconds_count\{method="PATCH",route="\/v1\/products\/index",status="405"\} \d+$/m,
    );
  });

  it('never names db_pool_connections_total, a counter name for what is a gauge', async () => {
    expect(await metricsText()).not.toContain('db_pool_connections_total');
  });
});

describe('GET /v3/api-docs', () => {
  it('is a public OpenAPI 3.1 document with the bearer scheme and the index paths', async () => {
    const response = await request(ctx.app).get('/v3/api-docs');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    const document = response.body as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');
    expect(document.components?.securitySchemes?.bearerAuth).toStrictEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(document.security).toStrictEqual([{ bearerAuth: [] }]);
    for (const path of ['/index', '/v1/products/index', '/v1/load-units/index', '/v1/packaging-units/index']) {
      expect(Object.keys(document.paths[path] ?? {})).toContain('get');
    }
  });

  it.each(['/actuator/health', '/index'])('documents the public GET %s as needing no token (D5)', async (path) => {
    const document = (await request(ctx.app).get('/v3/api-docs')).body as OpenApiDocument;
    expect(document.paths[path]?.get?.security).toStrictEqual([]);
  });

  it('answers the same document on every call', async () => {
    const first = await request(ctx.app).get('/v3/api-docs');
    const second = await request(ctx.app).get('/v3/api-docs');
    expect(second.body).toStrictEqual(first.body);
  });
});

describe('GET /swagger-ui', () => {
  it('is a public HTML page with a Content-Security-Policy that forbids framing and inline scripts', async () => {
    const response = await request(ctx.app).get('/swagger-ui');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.text).toContain('<script src="/swagger-ui/assets/swagger-ui-bundle.js"></script>');
    expect(response.text).not.toMatch(/<script>/);
  });

  it.each([
    ['/swagger-ui/assets/swagger-ui-bundle.js', /javascript/],
    ['/swagger-ui/assets/swagger-ui.css', /^text\/css/],
    ['/swagger-ui/explorer.js', /javascript/],
  ])('serves %s without a token', async (path, contentType) => {
    const response = await request(ctx.app).get(path);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(contentType);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.text.length).toBeGreaterThan(0);
  });

  it('names an icon among its public assets, so the browser does not ask for /favicon.ico', async () => {
    const page = await request(ctx.app).get('/swagger-ui');
    const href = /<link rel="icon" type="image\/png" href="([^"]+)">/.exec(page.text)?.[1];
    expect(href).toBe('/swagger-ui/assets/favicon-32x32.png');
    const icon = await request(ctx.app).get(href ?? '');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/png');
  });

  it.each([
    ['without a token', {}],
    ['with a token', { Authorization: bearer() }],
  ])('answers /favicon.ico %s with 404 NoHandlerFoundException, never 401', async (_case, headers) => {
    const response = await request(ctx.app).get('/favicon.ico').set(headers);
    expectServerDeclined(response, {
      status: 404,
      error: 'Not Found',
      exception: 'NoHandlerFoundException',
      message: 'No endpoint GET /favicon.ico',
      path: '/favicon.ico',
    });
    expect(response.headers['www-authenticate']).toBeUndefined();
  });

  it('points the explorer at /v3/api-docs', async () => {
    const response = await request(ctx.app).get('/swagger-ui/explorer.js');
    expect(response.text).toContain("url: '/v3/api-docs'");
  });

  it('answers 404 for an asset that does not exist and never serves files outside the assets', async () => {
    const missing = await request(ctx.app).get('/swagger-ui/assets/nothing.js');
    expect(missing.status).toBe(404);
    const escape = await request(ctx.app).get('/swagger-ui/assets/..%2f..%2fpackage.json');
    expect([400, 403, 404]).toContain(escape.status);
    expect(escape.text).not.toContain('"dependencies"');
  });
});

describe('every answer', () => {
  it('names no framework (no X-Powered-By) and forbids content sniffing, on success and on error', async () => {
    const answers = await Promise.all([
      request(ctx.app).get('/v1/products/index').set('Authorization', bearer()),
      request(ctx.app).get('/v1/products/index'),
      request(ctx.app).get('/no/such/path').set('Authorization', bearer()),
    ]);
    expect(answers.map((response) => response.status)).toEqual([200, 401, 404]);
    for (const response of answers) {
      expect(response.headers['x-powered-by']).toBeUndefined();
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});
