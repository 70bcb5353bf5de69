import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { withTransaction } from '../../src/db/tx.js';
import { appendEvents } from '../../src/events/outbox.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig } from './app.js';
import { bearer } from './tokens.js';

export interface LogEntry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** One instance's events runtime and app on a shared database, with what it logged. */
export interface EventsInstance {
  readonly app: Express;
  readonly events: EventsRuntime;
  readonly logs: LogEntry[];
  /** The `msg` of every log line at info and above, in order. */
  messages(): string[];
  stop(): Promise<void>;
}

/**
 * An instance as server.ts assembles it (events runtime, then the app), on the given pool: several on one database
 * are several instances of a deployment. Logs at info and keeps the lines.
 */
export function startInstance(pool: pg.Pool, environment: Record<string, string>): EventsInstance {
  const logs: LogEntry[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogEntry) });
  const config = testConfig(environment);
  const events = startEvents(pool, config, logger);
  const app = createApp({ config, pool, logger, events });
  return {
    app,
    events,
    logs,
    messages: () => logs.map((entry) => entry.msg),
    stop: () => events.stop(),
  };
}

/** Commits one event straight into the outbox (as a feature's transaction does); answers its id. */
export async function commitMarker(pool: pg.Pool, label: string): Promise<string> {
  const requestId = `marker-${randomUUID()}`;
  await withTransaction(pool, (tx) =>
    appendEvents(tx, [{ type: 'product.event.updated', key: requestId, resource: { marker: label } }], requestId),
  );
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM event_outbox WHERE request_id = $1', [requestId]);
  return rows[0]!.id;
}

export interface FeedEvent {
  id: string;
  type: string;
  occurredAt: string;
  requestId: string | null;
  resource: unknown;
  cursor: string;
}

/** Follows the feed from `after` (or the oldest event) until it has shown the event `untilId`. */
export async function readFeedUntil(app: Express, after: string | undefined, untilId: string): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let cursor = after;
  for (const deadline = Date.now() + 20_000; !events.some((event) => event.id === untilId);) {
    if (Date.now() > deadline) throw new Error(`the feed did not show ${untilId} within 20 s`);
    const query = cursor === undefined ? '?limit=1000&wait=2' : `?after=${cursor}&limit=1000&wait=2`;
    const response = await request(app).get(`/v1/events${query}`).set('Authorization', bearer());
    if (response.status !== 200) throw new Error(`feed: ${response.status} ${response.text}`);
    const page = response.body as { events: FeedEvent[]; next: string };
    events.push(...page.events);
    cursor = page.next;
  }
  return events;
}

/** The cursor of the newest event the feed shows (`0` before any). */
export async function feedHead(app: Express): Promise<string> {
  let cursor: string | undefined;
  for (;;) {
    const query = cursor === undefined ? '?limit=1000' : `?after=${cursor}&limit=1000`;
    const page = (await request(app).get(`/v1/events${query}`).set('Authorization', bearer())).body as {
      events: FeedEvent[];
      next: string;
    };
    if (page.events.length === 0) return page.next;
    cursor = page.next;
  }
}

export interface HealthBody {
  status: string;
  components?: { events?: { status: string; details: Record<string, unknown> } };
}

export async function health(app: Express): Promise<{ status: number; body: HealthBody }> {
  const response = await request(app).get('/actuator/health');
  return { status: response.status, body: response.body as HealthBody };
}

type EventsComponent = NonNullable<HealthBody['components']>['events'];

/** Polls the health check until its events component satisfies `done` (fails after `ms` with the last body). */
async function waitForEventsHealth(
  app: Express,
  done: (events: EventsComponent) => boolean,
  what: string,
  ms: number,
): Promise<HealthBody> {
  let last: HealthBody | undefined;
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    last = (await health(app)).body;
    if (done(last.components?.events)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} within ${ms} ms: ${JSON.stringify(last)}`);
}

/** Polls the health check until the events component shows `backlog`. */
export function waitForBacklog(app: Express, backlog: number, ms = 20_000): Promise<HealthBody> {
  return waitForEventsHealth(app, (events) => events?.details.backlog === backlog, `no backlog of ${backlog}`, ms);
}

/** Polls the health check until the events component shows the broker in `state`. */
export function waitForBroker(app: Express, state: string, ms = 20_000): Promise<HealthBody> {
  return waitForEventsHealth(app, (events) => events?.details.broker === state, `the broker not ${state}`, ms);
}

/** The value of an unlabelled Prometheus sample, or undefined when the metric is absent. */
export async function metricValue(app: Express, name: string): Promise<number | undefined> {
  const response = await request(app).get('/actuator/prometheus').set('Authorization', bearer());
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(response.text);
  return match ? Number(match[1]) : undefined;
}

/** The committed events of the outbox by id: their resource key and position (null until numbered). */
export async function outboxEvents(
  pool: pg.Pool,
): Promise<Map<string, { resourceKey: string; requestId: string | null; position: number | null }>> {
  const { rows } = await pool.query<{
    id: string;
    resourceKey: string;
    requestId: string | null;
    position: string | null;
  }>(
    `SELECT id, resource_key AS "resourceKey", request_id AS "requestId", position::text AS position
       FROM event_outbox ORDER BY position NULLS LAST, seq`,
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        resourceKey: row.resourceKey,
        requestId: row.requestId,
        position: row.position === null ? null : Number(row.position),
      },
    ]),
  );
}
