import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import pg from 'pg';

const tracer = trace.getTracer('inventory-service');

type Callback = (this: unknown, error: Error | null | undefined, ...results: unknown[]) => unknown;
type Method = (this: unknown, ...args: unknown[]) => unknown;

interface ConnectionParameters {
  readonly database?: string;
  readonly host?: string;
  readonly port?: number;
}

interface PoolOptions extends ConnectionParameters {
  readonly connectionString?: string;
  readonly idleTimeoutMillis?: number;
  readonly maxClient?: number;
}

const portOf = (port: unknown): number | undefined => (Number.isInteger(port) ? (port as number) : undefined);

// Worked out once per pool and per connection instead of for every statement: they never change.
const poolAttributes = new WeakMap<object, Attributes>();
const connectionAttributes = new WeakMap<object, Attributes>();

function attributesOfPool(pool: { options: PoolOptions }): Attributes {
  let attributes = poolAttributes.get(pool);
  if (attributes) return attributes;
  const { options } = pool;
  let url: URL | undefined;
  try {
    url = options.connectionString ? new URL(options.connectionString) : undefined;
  } catch {
    url = undefined;
  }
  attributes = {
    'db.postgresql.idle.timeout.millis': options.idleTimeoutMillis,
    'db.postgresql.max.client': options.maxClient,
    'db.system.name': 'postgresql',
    'db.namespace': url?.pathname.slice(1) ?? options.database,
    'server.address': url?.hostname ?? options.host,
    'server.port': Number(url?.port) || portOf(options.port),
  };
  poolAttributes.set(pool, attributes);
  return attributes;
}

function attributesOfConnection(client: { connectionParameters: ConnectionParameters }): Attributes {
  let attributes = connectionAttributes.get(client);
  if (attributes) return attributes;
  const { database, host, port } = client.connectionParameters;
  attributes = {
    'db.system.name': 'postgresql',
    'db.namespace': database,
    'server.port': portOf(port),
    'server.address': host,
  };
  connectionAttributes.set(client, attributes);
  return attributes;
}

/** The statement's first word, as the span name's operation when the statement has no name. */
function operationOf(text: string): string {
  const trimmed = text.trim();
  const space = trimmed.indexOf(' ');
  const word = (space === -1 ? trimmed : trimmed.slice(0, space)).toUpperCase();
  return word.endsWith(';') ? word.slice(0, -1) : word;
}

function end(span: Span, error: unknown): void {
  if (error) {
    const { name, code, message } = error as { name?: string; code?: string; message?: string };
    // The error's name and SQLSTATE only: a message may quote the statement's values.
    span.recordException(
      `PostgreSQL error of type '${name ?? 'PostgreSQLError'}' occurred (code: ${code ?? 'UNKNOWN'})`,
    );
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  span.end();
}

/** Ends `span` when `result` settles, leaving `result` to its caller as it is (no promise added in between). */
function endWhenSettled(span: Span, result: unknown): void {
  if (result instanceof Promise) {
    result.then(
      () => end(span, undefined),
      (error: unknown) => end(span, error ?? new Error('rejected')),
    );
  }
}

/** The callback, run in the caller's context (pg calls it from its socket's) once the span has ended. */
function endingCallback(span: Span, caller: Context, callback: Callback): Callback {
  return function (this: unknown, error, ...results) {
    end(span, error);
    return context.with(caller, callback, this, error, ...results);
  };
}

/**
 * Client spans for the SQL of a request (D36), named and attributed as `@opentelemetry/instrumentation-pg` names
 * them (`pg.query:<statement name or first word> <database>`, `pg-pool.connect`; the stable database semantic
 * conventions), but made here: that instrumentation copied every statement's config, chained two promises onto
 * every result and parsed the connection string at every checkout, which made a third of what tracing cost a read
 * (bench/notes.md, issue 38 item 2). As with its `requireParentSpan`, work outside any trace (the relay, the
 * sequencer, the feed) makes no span. Statements submitted as streams (cursors, COPY) get none: the
 * instrumentation started one for them that it never ended, so none was ever exported either.
 */
export function traceStatements(): void {
  const query = pg.Client.prototype.query as Method;
  pg.Client.prototype.query = function tracedQuery(this: pg.Client, ...args: unknown[]) {
    const caller = context.active();
    if (trace.getSpan(caller) === undefined) return query.apply(this, args);
    const statement = args[0] as string | { text?: unknown; name?: unknown; submit?: unknown } | undefined;
    const text = typeof statement === 'string' ? statement : statement?.text;
    if (typeof text !== 'string' || (typeof statement === 'object' && typeof statement.submit === 'function')) {
      return query.apply(this, args);
    }
    const name = typeof statement === 'object' && typeof statement.name === 'string' ? statement.name : undefined;
    const connection = this as unknown as { connectionParameters: ConnectionParameters };
    const span = tracer.startSpan(
      `pg.query:${name || operationOf(text)} ${connection.connectionParameters.database}`,
      { kind: SpanKind.CLIENT, attributes: attributesOfConnection(connection) },
      caller,
    );
    span.setAttribute('db.query.text', text);
    if (name !== undefined) span.setAttribute('db.postgresql.plan', name);
    const last = args.length - 1;
    if (typeof args[last] === 'function') args[last] = endingCallback(span, caller, args[last] as Callback);
    let result: unknown;
    try {
      result = query.apply(this, args);
    } catch (error) {
      end(span, error);
      throw error;
    }
    endWhenSettled(span, result);
    return result;
  } as typeof pg.Client.prototype.query;

  const connect = pg.Pool.prototype.connect as Method;
  pg.Pool.prototype.connect = function tracedConnect(this: pg.Pool, callback?: Callback) {
    const caller = context.active();
    if (trace.getSpan(caller) === undefined) return connect.call(this, callback);
    const span = tracer.startSpan(
      'pg-pool.connect',
      { kind: SpanKind.CLIENT, attributes: attributesOfPool(this as unknown as { options: PoolOptions }) },
      caller,
    );
    if (callback) return connect.call(this, endingCallback(span, caller, callback));
    const result = connect.call(this);
    endWhenSettled(span, result);
    return result;
  } as typeof pg.Pool.prototype.connect;
}
