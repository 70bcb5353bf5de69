import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ApiError, notFound } from '../../src/http/api-error.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { requestContext } from '../../src/http/request-context.js';
import { Routes } from '../../src/http/routing.js';
import { expectNoInternals, expectServerDeclined, HAL_JSON_UTF8, UUID } from '../support/http.js';
import { waitFor } from '../support/pg-activity.js';
import { closedPort } from '../support/ports.js';

/**
 * The one error middleware, driven through a probe route table: failures that no real route can be made to
 * produce on demand (an unexpected exception, an unreachable database) must still be rendered safely.
 */
const logLines: string[] = [];
let app: Express;
let unreachable: pg.Pool;

const SQL_IN_MESSAGE = 'relation "secret_table" does not exist: SELECT password FROM secret_table';

beforeAll(async () => {
  unreachable = new pg.Pool({
    connectionString: `postgres://nobody:nothing@127.0.0.1:${await closedPort()}/none`,
    connectionTimeoutMillis: 1000,
  });
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  const routes = new Routes(loadConfig({ BODY_LIMIT: '1kb' }).bodies);
  // This table has no registry: a probe's doc is only what RouteDefinition requires.
  const probe = (operationId: string) => ({ operationId, summary: 'A probe', tags: ['Probe'], responses: {} });
  routes.add({
    method: 'GET',
    path: '/probe/unexpected',
    doc: probe('probe-unexpected'),
    produces: ['application/json'],
    handler: () => {
      throw new TypeError(SQL_IN_MESSAGE);
    },
  });
  routes.add({
    method: 'GET',
    path: '/probe/database-down',
    doc: probe('probe-database-down'),
    produces: ['application/json'],
    handler: async () => {
      await unreachable.query('SELECT 1');
    },
  });
  routes.add({
    method: 'GET',
    path: '/probe/not-found/:key',
    doc: probe('probe-not-found'),
    produces: ['application/hal+json'],
    handler: (req) => {
      throw notFound('owms.wms.inv.probe.notFound', `No probe ${String(req.params.key)}`, [req.params.key]);
    },
  });
  routes.add({
    method: 'POST',
    path: '/probe/echo',
    doc: probe('probe-echo'),
    consumes: ['json'],
    handler: (req, res) => {
      res.status(200).json({ received: req.body as unknown });
    },
  });
  routes.add({
    method: 'GET',
    path: '/probe/after-client-left',
    doc: probe('probe-after-client-left'),
    produces: ['application/json'],
    // Answers only once its client has gone away.
    handler: async (req, res) => {
      if (!req.socket.destroyed) await new Promise((resolve) => req.socket.once('close', resolve));
      res.status(200).json({});
    },
  });
  app = express();
  app.use(requestContext(logger));
  app.use(routes.router);
  app.use(errorHandler);
});

afterAll(async () => {
  await unreachable?.end();
});

describe('the error handler', () => {
  it('answers an unexpected failure with a generic 500 that quotes the request id and hides the cause', async () => {
    const response = await request(app).get('/probe/unexpected?x=1').set('X-Request-Id', 'probe-500');
    expectServerDeclined(response, {
      status: 500,
      error: 'Internal Server Error',
      exception: 'InternalServerError',
      message: 'Unexpected error; quote request id probe-500 when reporting it',
      path: '/probe/unexpected',
    });
    expect(response.headers['x-request-id']).toBe('probe-500');
    expect(response.text).not.toContain('secret_table');
    expect(response.text).not.toContain('TypeError');
    expectNoInternals(response);
  });

  it('logs the cause of a 500 with its stack under the request id', async () => {
    await request(app).get('/probe/unexpected').set('X-Request-Id', 'probe-log');
    const entries = logLines.map((line) => JSON.parse(line) as { level: number; req?: { id?: string }; err?: Error });
    const logged = entries.find((entry) => entry.req?.id === 'probe-log' && entry.err?.message === SQL_IN_MESSAGE);
    expect(logged?.level).toBeGreaterThanOrEqual(50);
    expect(logged?.err?.stack).toMatch(/^TypeError: relation/);
  });

  it('answers an unreachable database with 503 DataAccessResourceFailureException and Retry-After', async () => {
    const response = await request(app).get('/probe/database-down');
    expectServerDeclined(response, {
      status: 503,
      error: 'Service Unavailable',
      exception: 'DataAccessResourceFailureException',
      message: 'The database is unavailable; retry later',
      path: '/probe/database-down',
    });
    expect(response.headers['retry-after']).toBe('5');
    expect(response.headers['x-request-id']).toMatch(UUID);
    expectNoInternals(response);
    expect(response.text).not.toContain('ECONNREFUSED');
  });

  it('answers an ApiError with the API-declined body as application/hal+json', async () => {
    const response = await request(app).get('/probe/not-found/abc');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toStrictEqual({
      message: 'No probe abc',
      messageKey: 'owms.wms.inv.probe.notFound',
      obj: ['abc'],
      httpStatus: '404',
      class: 'String',
    });
  });

  it('answers a broken percent escape in a path variable with a client error, never a 500', async () => {
    const response = await request(app).get('/probe/not-found/%zz');
    expect([400, 404]).toContain(response.status);
    const body = response.body as { status?: number; httpStatus?: string };
    expect(body.status ?? Number(body.httpStatus)).toBe(response.status);
    expectNoInternals(response);
  });

  it('renders an ApiError whose body is empty with no body at all', async () => {
    const local = express();
    local.get('/', () => {
      throw new ApiError(404, undefined, 'unknown uom', { body: 'empty' });
    });
    local.use(errorHandler);
    const response = await request(local).get('/');
    expect(response.status).toBe(404);
    expect(response.text).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
  });
});

describe('request bodies on a route that consumes JSON (BODY_LIMIT 1kb)', () => {
  it('parses application/json and application/*+json bodies', async () => {
    const plain = await request(app).post('/probe/echo').send({ a: 1 });
    expect(plain.body).toStrictEqual({ received: { a: 1 } });
    const hal = await request(app)
      .post('/probe/echo')
      .set('Content-Type', 'application/hal+json')
      .send(JSON.stringify([1]));
    expect(hal.body).toStrictEqual({ received: [1] });
  });

  it('answers malformed JSON with 400 HttpMessageNotReadableException', async () => {
    const response = await request(app).post('/probe/echo').set('Content-Type', 'application/json').send('{"a":');
    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: /^Request body is not readable/,
      path: '/probe/echo',
    });
    expectNoInternals(response);
  });

  it('answers a body over the limit with 413 and one under it with 200', async () => {
    const over = await request(app)
      .post('/probe/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(1100) }));
    expectServerDeclined(over, {
      status: 413,
      error: 'Payload Too Large',
      exception: 'PayloadTooLargeException',
      message: 'Request body exceeds the limit of 1kb',
      path: '/probe/echo',
    });
    const under = await request(app)
      .post('/probe/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(900) }));
    expect(under.status).toBe(200);
  });

  it('answers an unsupported content type with 415 naming the accepted ones', async () => {
    const response = await request(app).post('/probe/echo').set('Content-Type', 'application/xml').send('<a/>');
    expectServerDeclined(response, {
      status: 415,
      error: 'Unsupported Media Type',
      exception: 'HttpMediaTypeNotSupportedException',
      message: "Content type 'application/xml' is not supported; use application/json or application/*+json",
      path: '/probe/echo',
    });
  });
});

describe('the access log', () => {
  it('writes one line per request carrying the request id, with token-like query parameters masked', async () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9.leaked.signature';
    await request(app)
      .post(`/probe/echo?access_token=${secret}&sku=A-1`)
      .set('X-Request-Id', 'probe-access-log')
      .set('Authorization', `Bearer ${secret}`)
      .send({ a: 1 });
    const lines = logLines.filter((line) => line.includes('probe-access-log'));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}') as {
      req?: { id?: string; url?: string };
      res?: { statusCode?: number };
    };
    expect(entry.req?.id).toBe('probe-access-log');
    expect(entry.req?.url).toBe('/probe/echo?access_token=[REDACTED]&sku=A-1');
    expect(entry.res?.statusCode).toBe(200);
    expect(lines[0]).not.toContain(secret);
  });

  it('writes the line of a request whose client went away before the answer, once', async () => {
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const reached = once(server, 'request');
      const client = http.get({
        port,
        host: '127.0.0.1',
        path: '/probe/after-client-left',
        headers: { 'X-Request-Id': 'probe-left' },
      });
      client.on('error', () => undefined);
      await reached;
      client.destroy();
      await waitFor('the access line', async () =>
        logLines.some((line) => line.includes('probe-left')) ? true : undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      server.close();
    }
    const lines = logLines.filter((line) => line.includes('"probe-left"'));
    expect(lines).toHaveLength(1);
    expect((JSON.parse(lines[0]!) as { req?: { url?: string } }).req?.url).toBe('/probe/after-client-left');
  });
});
