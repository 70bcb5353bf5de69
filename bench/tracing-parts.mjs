// What each part of a traced read costs (issue 38 item 2), without the service: a read's tracing simulated in one
// process (a server span with the attributes of src/tracing/server-spans.ts, a connection-wait span and a statement
// span with those of src/tracing/pg-spans.ts, the trace id read as a log line reads it, about 45 promises), 20,000
// requests 50 at a time after 5,000 of warm-up; CPU µs per request by process.cpuUsage, the SDK's last export
// included. One variant per process (the SDK is global): run them interleaved.
//   node bench/tracing-parts.mjs <off|als|on>      (needs an OTLP/HTTP sink at 127.0.0.1:4399 for `on`)
//   PARTS_EXPORTER=drop|serialize: a BatchSpanProcessor whose exporter drops the spans, or serialises them
//   (OTLP protobuf) and drops the bytes. PARTS_NO_ATTRIBUTES=1: spans with names only. PARTS_CACHED_STRINGS=1: the
//   serialiser patched to take strings' bytes from a cache (an experiment). OTEL_* settings as usual.
const MODE = process.argv[2] ?? 'on';
const N = Number(process.env.PARTS_REQUESTS ?? 20_000);
const IN_FLIGHT = 50;
let stop = async () => {};

/**
 * An experiment, not the service's code: the SDK's protobuf writer and size estimator take the UTF-8 bytes of a
 * string seen before from a cache instead of walking its characters (three passes per string and export).
 */
async function cacheEncodedStrings() {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const base = '@opentelemetry/otlp-transformer/build/src/common/protobuf/';
  const { ProtobufWriter } = require(`${base}protobuf-writer.js`);
  const { ProtobufSizeEstimator } = require(`${base}protobuf-size-estimator.js`);
  const cache = new Map();
  const bytesOf = (text) => {
    let bytes = cache.get(text);
    if (bytes === undefined) {
      bytes = Buffer.from(text, 'utf8');
      if (cache.size < 10_000) cache.set(text, bytes);
    }
    return bytes;
  };
  ProtobufWriter.prototype.writeString = function (text) {
    this.writeBytes(bytesOf(text));
  };
  ProtobufSizeEstimator.prototype.writeString = function (text) {
    this.writeBytes(bytesOf(text));
  };
}
if (MODE === 'als') {
  const { AsyncLocalStorage } = await import('node:async_hooks');
  new AsyncLocalStorage().enterWith({});
} else if (MODE === 'on') {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT ??= 'http://127.0.0.1:4399';
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const options = { serviceName: 'parts', metricReaders: [], logRecordProcessors: [], instrumentations: [] };
  if (process.env.PARTS_EXPORTER) {
    const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer');
    const serialize = process.env.PARTS_EXPORTER === 'serialize';
    const exporter = {
      export(spans, done) {
        if (serialize) ProtobufTraceSerializer.serializeRequest(spans);
        done({ code: 0 });
      },
      shutdown: async () => {},
      forceFlush: async () => {},
    };
    options.spanProcessors = [new BatchSpanProcessor(exporter)];
  }
  if (process.env.PARTS_CACHED_STRINGS) await cacheEncodedStrings();
  const sdk = new NodeSDK(options);
  sdk.start();
  stop = () => sdk.shutdown();
}
const { context, propagation, ROOT_CONTEXT, SpanKind, trace } = await import('@opentelemetry/api');
const tracer = trace.getTracer('inventory-service');
const bare = Boolean(process.env.PARTS_NO_ATTRIBUTES);
const TEXT =
  'SELECT p.p_key, p.sku, p.name, p.description, p.base_uom, p.created_at, p.updated_at, p.version FROM product p WHERE p.sku = $1';
const connection = bare
  ? {}
  : { 'db.system.name': 'postgresql', 'db.namespace': 'bench', 'server.port': 5432, 'server.address': '127.0.0.1' };
const pool = bare ? {} : { 'db.postgresql.idle.timeout.millis': 10_000, 'db.postgresql.max.client': 10, ...connection };
const headers = { host: '127.0.0.1:3000', 'user-agent': 'autocannon', authorization: 'Bearer x' };
const turn = () => new Promise((resolve) => setImmediate(resolve));
let traceIds = 0;

async function handle() {
  for (let i = 0; i < 10; i++) await Promise.resolve(i);
  const caller = context.active();
  if (trace.getSpan(caller)) {
    const wait = tracer.startSpan('pg-pool.connect', { kind: SpanKind.CLIENT, attributes: pool }, caller);
    await Promise.resolve();
    wait.end();
    const statement = tracer.startSpan(
      'pg.query:product-by-sku bench',
      { kind: SpanKind.CLIENT, attributes: connection },
      caller,
    );
    if (!bare) statement.setAttribute('db.query.text', TEXT);
    if (!bare) statement.setAttribute('db.postgresql.plan', 'product-by-sku');
    await turn();
    statement.end();
  } else {
    await Promise.resolve();
    await turn();
  }
  for (let i = 0; i < 10; i++) await Promise.resolve(i);
  traceIds += trace.getActiveSpan()?.spanContext().traceId.length ?? 0; // a log line's trace fields
}

function request() {
  return new Promise((resolve) => {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const attributes = bare
      ? {}
      : {
          'http.request.method': 'GET',
          'url.path': '/v1/products',
          'url.scheme': 'http',
          'network.peer.address': '127.0.0.1',
          'user_agent.original': 'autocannon',
        };
    const span = tracer.startSpan('GET', { kind: SpanKind.SERVER, attributes }, parent);
    context.with(trace.setSpan(parent, span), () =>
      handle().then(() => {
        span.updateName('GET /v1/products');
        if (!bare) span.setAttribute('http.route', '/v1/products');
        if (!bare) span.setAttribute('http.response.status_code', 200);
        span.end();
        resolve();
      }),
    );
  });
}

async function run(count) {
  let left = count;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await request();
    }),
  );
}

await run(5_000);
const before = process.cpuUsage();
await run(N);
await stop();
const used = process.cpuUsage(before);
const settings = Object.entries(process.env)
  .filter(([key]) => key.startsWith('OTEL_') || key.startsWith('PARTS_'))
  .map(([key, value]) => `${key}=${value}`)
  .join(' ');
console.log(
  `${MODE} ${settings}: ${((used.user + used.system) / N).toFixed(1)} µs CPU per request (${traceIds / 32} trace ids read)`,
);
