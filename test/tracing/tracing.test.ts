import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKER_URL, describeWithBroker, useBrokerExclusively } from '../support/broker.js';
import { aProduct } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { consumeExchange, deleteExchange, type EventConsumer } from '../support/event-consumer.js';
import { waitFor } from '../support/pg-activity.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 28 item 3 (D36): the built service as an operator runs it, on the real PostgreSQL and RabbitMQ, once with
 * tracing on (exporting OTLP/HTTP to a receiver in this test) and once off (no OTEL_* setting at all).
 */
const PRELOAD = fileURLToPath(new URL('./loaded-modules.mjs', import.meta.url));
const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4 };
const SDK_MODULE = /node_modules\/@opentelemetry\/sdk-/;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'inventory-tracing-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

interface Run {
  readonly database: TestDatabase;
  readonly service: ServiceProcess;
  readonly consumer: EventConsumer;
  readonly exchange: string;
  readonly loadedModulesFile: string;
}

async function startRun(environment: Record<string, string>): Promise<Run> {
  const exchange = `inventory-test-tracing-${randomUUID()}`;
  const loadedModulesFile = path.join(scratch, `${exchange}.json`);
  const database = await createTestDatabase();
  const consumer = await consumeExchange(exchange, { declareExchange: true });
  const [service] = await startServicesOnDatabase(database.url, 1, {
    LOG_LEVEL: 'info',
    AMQP_URL: BROKER_URL,
    AMQP_EXCHANGE: exchange,
    NODE_OPTIONS: `--import ${PRELOAD}`,
    LOADED_MODULES_FILE: loadedModulesFile,
    ...environment,
  });
  return { database, service: service!, consumer, exchange, loadedModulesFile };
}

async function stopRun(run: Run | undefined): Promise<void> {
  if (!run) return;
  await stopServices([run.service]);
  await run.consumer.close();
  await deleteExchange(run.exchange);
  await run.database.drop();
}

/** A request that continues the caller's trace: a product create with a W3C traceparent. */
async function createProductInTrace(run: Run, traceId: string, callerSpanId: string, flags = '01'): Promise<string> {
  return postProducts(run, 'application/json', JSON.stringify(aProduct()), `00-${traceId}-${callerSpanId}-${flags}`);
}

async function postProducts(run: Run, contentType: string, body: string, traceparent: string): Promise<string> {
  const requestId = randomUUID();
  const response = await fetch(`${run.service.baseUrl}/v1/products`, {
    method: 'POST',
    headers: { Authorization: bearer(), 'Content-Type': contentType, 'X-Request-Id': requestId, traceparent },
    body,
  });
  expect(response.status).toBe(201);
  return requestId;
}

async function storedEventOf(run: Run, requestId: string): Promise<{ id: string; traceparent: string | null }> {
  const result = await run.database.pool.query<{ id: string; traceparent: string | null }>(
    'SELECT id, traceparent FROM event_outbox WHERE request_id = $1',
    [requestId],
  );
  expect(result.rows).toHaveLength(1);
  return result.rows[0]!;
}

async function loadedModules(run: Run): Promise<string[]> {
  return JSON.parse(await readFile(run.loadedModulesFile, 'utf8')) as string[];
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

describeWithBroker('tracing (D36)', () => {
  useBrokerExclusively();

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let receiver: OtlpReceiver;
    let run: Run | undefined;
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const probeTraceId = hex(16);
    const unsampledTraceId = hex(16);
    let requestId: string;
    let stored: { id: string; traceparent: string | null };
    let unsampled: { id: string; traceparent: string | null };

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      run = await startRun({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      // Before the traced request: its spans are exported after any that these would have made.
      const probe = await fetch(`${run.service.baseUrl}/actuator/health`, {
        headers: { traceparent: `00-${probeTraceId}-${hex(8)}-01` },
      });
      expect(probe.status).toBe(200);
      unsampled = await storedEventOf(run, await createProductInTrace(run, unsampledTraceId, hex(8), '00'));
      await run.consumer.waitForId(unsampled.id);
      requestId = await createProductInTrace(run, traceId, callerSpanId);
      stored = await storedEventOf(run, requestId);
      await run.consumer.waitForId(stored.id);
      await receiver.waitFor(
        (spans) => spans.some((span) => span.traceId === traceId && span.kind === SPAN_KIND.producer),
        15_000,
        'the publish span',
      );
    }, 120_000);

    afterAll(async () => {
      await stopRun(run);
      await receiver?.close();
    }, 60_000);

    const inTrace = (): ReceivedSpan[] => receiver.spans.filter((span) => span.traceId === traceId);

    it('continues the caller’s trace with a server span for the request', () => {
      const server = inTrace().filter((span) => span.kind === SPAN_KIND.server);
      expect(server).toHaveLength(1);
      expect(server[0]).toMatchObject({
        name: 'POST /v1/products',
        parentSpanId: callerSpanId,
        attributes: { 'http.route': '/v1/products', 'http.response.status_code': 201 },
      });
    });

    it('makes no span per middleware, router or handler: the server span alone names the route', () => {
      const internal = inTrace().filter((span) => span.kind === SPAN_KIND.internal);
      expect(internal).toStrictEqual([]);
    });

    it('traces no probe', () => {
      expect(receiver.spans.filter((span) => span.traceId === probeTraceId)).toStrictEqual([]);
    });

    it('records the request’s SQL as client spans in the same trace', () => {
      const statements = inTrace().filter(
        (span) => span.kind === SPAN_KIND.client && span.attributes['db.system.name'] === 'postgresql',
      );
      expect(statements.map((span) => span.attributes['db.query.text'])).toContainEqual(
        expect.stringContaining('INSERT INTO event_outbox'),
      );
    });

    it('names each statement’s span by statement and database, as a child of the request’s server span', () => {
      const server = inTrace().find((span) => span.kind === SPAN_KIND.server)!;
      const insert = inTrace().find((span) =>
        String(span.attributes['db.query.text']).includes('INSERT INTO event_outbox'),
      );
      expect(insert).toMatchObject({
        name: expect.stringMatching(new RegExp(`^pg\\.query:\\S+ ${run!.database.name}$`)),
        parentSpanId: server.spanId,
        attributes: { 'db.system.name': 'postgresql', 'db.namespace': run!.database.name },
      });
    });

    it('records each wait for a pooled connection as a client span of the request', () => {
      const server = inTrace().find((span) => span.kind === SPAN_KIND.server)!;
      const waits = inTrace().filter((span) => span.name === 'pg-pool.connect');
      expect(waits.length).toBeGreaterThan(0);
      for (const wait of waits) {
        expect(wait).toMatchObject({
          kind: SPAN_KIND.client,
          parentSpanId: server.spanId,
          attributes: { 'db.system.name': 'postgresql', 'db.namespace': run!.database.name },
        });
      }
    });

    it('leaves the numbering of the request’s events, which runs for no request, out of its trace', () => {
      const statements = inTrace().map((span) => String(span.attributes['db.query.text'] ?? ''));
      expect(statements.filter((text) => text.includes('event_feed_state'))).toStrictEqual([]);
    });

    it('stores the request’s traceparent with its event', () => {
      const spanIds = new Set(inTrace().map((span) => span.spanId));
      const [, storedTrace, storedSpan, flags] = stored.traceparent!.split('-');
      expect({ storedTrace, flags, aSpanOfTheRequest: spanIds.has(storedSpan!) }).toStrictEqual({
        storedTrace: traceId,
        flags: '01',
        aSpanOfTheRequest: true,
      });
    });

    it('publishes the event in a producer span, child of the stored traceparent, in the same trace', () => {
      const publish = inTrace().filter((span) => span.kind === SPAN_KIND.producer);
      expect(publish).toHaveLength(1);
      expect(publish[0]).toMatchObject({
        name: `publish ${run!.exchange}`,
        parentSpanId: stored.traceparent!.split('-')[2],
        attributes: {
          'messaging.system': 'rabbitmq',
          'messaging.destination.name': run!.exchange,
          'messaging.rabbitmq.destination.routing_key': 'product.event.created',
          'messaging.message.id': stored.id,
        },
      });
    });

    it('hands the consumer a traceparent header naming the publish span', () => {
      const publish = inTrace().find((span) => span.kind === SPAN_KIND.producer)!;
      const message = run!.consumer.received.find((received) => received.messageId === stored.id);
      expect(message?.traceparent).toBe(`00-${traceId}-${publish.spanId}-01`);
    });

    it('writes the trace id on the request’s access log line', async () => {
      const accessLines = (): Record<string, unknown>[] =>
        run!.service.logEntries().filter((entry) => (entry.req as { id?: string } | undefined)?.id === requestId);
      // Log lines reach stdout in batches, at the latest 100 ms after they are written (src/logger.ts).
      await waitFor('the access log line', async () => (accessLines().length > 0 ? true : undefined), 5000);
      const access = accessLines();
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ trace_id: traceId, trace_flags: '01' });
    });

    it('keeps a caller’s decision not to sample: no span, the event and its message marked unsampled', () => {
      const message = run!.consumer.received.find((received) => received.messageId === unsampled.id);
      const unsampledTrace = new RegExp(`^00-${unsampledTraceId}-[0-9a-f]{16}-00$`);
      expect({
        spans: receiver.spans.filter((span) => span.traceId === unsampledTraceId),
        stored: unsampledTrace.test(unsampled.traceparent ?? ''),
        header: unsampledTrace.test(String(message?.traceparent)),
      }).toStrictEqual({ spans: [], stored: true, header: true });
    });

    it('stores the traceparent of a streamed import with each of its events', async () => {
      const importTraceId = hex(16);
      const body = [aProduct(), aProduct()].map((product) => JSON.stringify(product)).join('\n');
      const importId = await postProducts(run!, 'application/x-ndjson', body, `00-${importTraceId}-${hex(8)}-01`);
      const { rows } = await run!.database.pool.query<{ traceparent: string | null }>(
        'SELECT traceparent FROM event_outbox WHERE request_id = $1',
        [importId],
      );
      const traces = rows.map((row) => row.traceparent?.split('-')[1]);
      expect(traces).toStrictEqual([importTraceId, importTraceId]);
    });

    it('loads the OpenTelemetry SDK', async () => {
      await stopServices([run!.service]);
      expect((await loadedModules(run!)).some((file) => SDK_MODULE.test(file))).toBe(true);
    });
  });

  describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    let run: Run | undefined;
    let requestId: string;
    let stored: { id: string; traceparent: string | null };

    beforeAll(async () => {
      run = await startRun({});
      requestId = await createProductInTrace(run, hex(16), hex(8));
      stored = await storedEventOf(run, requestId);
      await run.consumer.waitForId(stored.id);
    }, 120_000);

    afterAll(() => stopRun(run), 60_000);

    it('stores no traceparent with the event, even when the request sent one', () => {
      expect(stored.traceparent).toBeNull();
    });

    it('publishes the event without a traceparent header', () => {
      const message = run!.consumer.received.find((received) => received.messageId === stored.id);
      expect(message).toMatchObject({ routingKey: 'product.event.created', ownsEventType: 'created' });
      expect(message?.traceparent).toBeUndefined();
    });

    it('writes no trace fields on log lines', () => {
      const withTrace = run!.service.logEntries().filter((entry) => 'trace_id' in entry || 'span_id' in entry);
      expect(withTrace).toStrictEqual([]);
    });

    it('loads no module of the OpenTelemetry SDK', async () => {
      await stopServices([run!.service]);
      const modules = await loadedModules(run!);
      expect(modules.length).toBeGreaterThan(0);
      expect(modules.filter((file) => SDK_MODULE.test(file))).toStrictEqual([]);
    });
  });
});
