import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig, useTestApp } from '../support/app.js';
import { JSON_UTF8 } from '../support/http.js';
import { closedPort } from '../support/ports.js';

/**
 * Issue 28 / D36: an orchestrator restarts a pod whose liveness fails and stops routing to one whose readiness
 * fails. Liveness must not depend on the database (an outage would restart every pod); readiness does, and turns
 * 503 as soon as shutdown starts, so traffic moves away before the connections close.
 */
const ctx = useTestApp();
const LIVENESS = '/actuator/health/liveness';
const READINESS = '/actuator/health/readiness';

async function probe(app: Parameters<typeof request>[0], path: string): Promise<{ status: number; body: unknown }> {
  const response = await request(app).get(path);
  expect(response.headers['content-type']).toBe(JSON_UTF8);
  return { status: response.status, body: response.body as unknown };
}

describe('with the database up', () => {
  it('answers liveness and readiness 200 UP without a token', async () => {
    expect(await probe(ctx.app, LIVENESS)).toStrictEqual({ status: 200, body: { status: 'UP' } });
    expect(await probe(ctx.app, READINESS)).toStrictEqual({ status: 200, body: { status: 'UP' } });
  });

  it('answers readiness 503 OUT_OF_SERVICE, and liveness still 200, once shutdown has started', async () => {
    let draining = false;
    const app = createApp({
      config: ctx.config,
      pool: ctx.db.pool,
      logger: pino({ level: 'silent' }),
      events: ctx.events,
      isDraining: () => draining,
    });
    expect((await probe(app, READINESS)).status).toBe(200);
    draining = true;
    expect(await probe(app, READINESS)).toStrictEqual({ status: 503, body: { status: 'OUT_OF_SERVICE' } });
    expect(await probe(app, LIVENESS)).toStrictEqual({ status: 200, body: { status: 'UP' } });
  });

  it('lists both probes in the OpenAPI document as public operations', async () => {
    const document = (await request(ctx.app).get('/v3/api-docs')).body as {
      paths: Record<string, { get?: { security?: unknown[]; responses: Record<string, unknown> } }>;
    };
    expect(document.paths[LIVENESS]?.get?.security).toStrictEqual([]);
    expect(document.paths[LIVENESS]?.get?.responses).toHaveProperty('200');
    expect(document.paths[READINESS]?.get?.security).toStrictEqual([]);
    expect(document.paths[READINESS]?.get?.responses).toHaveProperty('200');
    expect(document.paths[READINESS]?.get?.responses).toHaveProperty('503');
  });
});

describe('without the database', () => {
  let unreachable: pg.Pool;
  let events: EventsRuntime;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    unreachable = new pg.Pool({
      connectionString: `postgres://nobody:nothing@127.0.0.1:${await closedPort()}/none`,
      connectionTimeoutMillis: 1000,
    });
    const logger = pino({ level: 'silent' });
    events = startEvents(unreachable, testConfig(), logger);
    app = createApp({ config: testConfig(), pool: unreachable, logger, events });
  });
  afterAll(async () => {
    await events.stop();
    await unreachable.end();
  });

  it('answers readiness 503 DOWN, and liveness 200 UP: an outage must not restart the pods', async () => {
    expect(await probe(app, READINESS)).toStrictEqual({ status: 503, body: { status: 'DOWN' } });
    expect(await probe(app, LIVENESS)).toStrictEqual({ status: 200, body: { status: 'UP' } });
  });
});
