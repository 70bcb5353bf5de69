/**
 * The CPU per read that tracing adds, in one process, alternating (issue 38 item 2): the SDK is started as
 * src/main.ts starts it (OTLP/HTTP to a sink in a child process, so that the sink's CPU is not counted), then two
 * apps of one build on pools of their own, driven over loopback HTTP in blocks of `BLOCK` requests, the order
 * reversed every round, as in bench/read-cost.ts: "off" (tracing off, and the context manager disabled for its
 * blocks, so Node 20 runs without the AsyncLocalStorage's promise hooks, as a service with tracing off does),
 * "context only" (tracing off in the app, the context manager on: what the promise hooks cost) and "on" (server
 * span, statement spans, trace fields on log lines, exported). Settings of the spans come from the environment
 * (OTEL_TRACES_EXPORTER=none, OTEL_EXPORTER_OTLP_PROTOCOL=http/json, …).
 * Usage: npx tsx bench/tracing-cost.ts <dist dir> [rounds] > /dev/null   (log lines go to stdout)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import pg from 'pg';
import type * as App from '../src/app.js';
import type * as Configuration from '../src/config.js';
import type * as Runtime from '../src/events/runtime.js';
import type * as Logging from '../src/logger.js';
import type * as Sdk from '../src/tracing/sdk.js';
import type * as Shutdown from '../src/tracing/shutdown.js';
import { migrate } from '../src/db/migrate.js';
import { quietLogger } from './database.js';
import { bearerToken, JWT_SECRET } from './load.js';
import { productSku, seedMasterData, seedProducts } from './seed.js';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PRODUCTS = 5_000;
const BLOCK = Number(process.env.TRACING_COST_BLOCK ?? 1_000);
const IN_FLIGHT = 16;

const SINK = `
let exports = 0;
let total = 0;
process.on('SIGTERM', () => {
  process.stderr.write('the sink received ' + exports + ' exports, ' + total + ' bytes\\n');
  process.exit(0);
});
const server = require('node:http').createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    exports++;
    total += bytes;
    res.writeHead(200, { 'Content-Type': req.headers['content-type'] }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

/** An OTLP/HTTP collector stand-in in a process of its own: accepts every export. */
async function startSink(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = (await once(child.stdout, 'data')) as [Buffer];
  return {
    endpoint: `http://127.0.0.1:${port.toString().trim()}`,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

interface Build {
  readonly name: string;
  readonly port: number;
  /** Whether the process keeps a context (an AsyncLocalStorage, with its promise hooks) during the block. */
  readonly keepsContext: boolean;
}

/**
 * Tracing's context manager on or off for the process: disabled, its AsyncLocalStorage is disabled too, and with
 * no other AsyncLocalStorage in use Node 20 removes the promise hooks, as in a service with tracing off.
 */
function keepContext(on: boolean): void {
  context.disable();
  if (on) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

async function startApp(
  name: string,
  keepsContext: boolean,
  distDir: string,
  databaseUrl: string,
  endpoint?: string,
): Promise<Build> {
  const load = async <T>(file: string): Promise<T> =>
    (await import(pathToFileURL(path.resolve(distDir, file)).href)) as T;
  const { createApp } = await load<typeof App>('app.js');
  const { loadConfig } = await load<typeof Configuration>('config.js');
  const { createLogger } = await load<typeof Logging>('logger.js');
  const config = loadConfig({
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: JWT_SECRET,
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    ...(endpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : {}),
  });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => undefined); // the database is dropped under it at the end
  const { startEvents } = await load<typeof Runtime>('events/runtime.js');
  const logger = createLogger(config);
  const app = createApp({ config, pool, logger, events: startEvents(pool, config, logger) });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { name, keepsContext, port: (server.address() as AddressInfo).port };
}

/** `count` GETs of the paths `next` gives, IN_FLIGHT at a time; answers the CPU µs per request. */
async function block(build: Build, count: number, next: () => string, authorization: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  let sent = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: build.port, path: next(), agent, headers: { authorization } });
      req.on('response', (res) => {
        if (res.statusCode !== 200) reject(new Error(`${build.name}: ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
    });
  const worker = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      await one();
    }
  };
  keepContext(build.keepsContext);
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const used = process.cpuUsage(before);
  agent.destroy();
  return (used.user + used.system) / count;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const [distDir, roundsText] = process.argv.slice(2);
  if (!distDir) throw new Error('usage: tracing-cost.ts <dist dir> [rounds]');
  const rounds = Number(roundsText ?? 6);
  const sink = await startSink();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.endpoint;
  const { startTracing } = (await import(pathToFileURL(path.resolve(distDir, 'tracing/sdk.js')).href)) as typeof Sdk;
  startTracing();
  const name = `inventory_tracing_cost_${process.pid}`;
  const admin = new pg.Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const seedPool = new pg.Pool({ connectionString: url.href, max: 4 });
  try {
    await migrate(seedPool, quietLogger());
    await seedMasterData(seedPool);
    await seedProducts(seedPool, 'P', 1, PRODUCTS);
    await seedPool.query('VACUUM ANALYZE');
    const builds = [
      await startApp('off', false, distDir, url.href),
      await startApp('context only', true, distDir, url.href),
      await startApp('on', true, distDir, url.href, sink.endpoint),
    ];
    const authorization = bearerToken();
    const next = (): string => `/v1/products?sku=${productSku('P', 1 + Math.floor(Math.random() * PRODUCTS))}`;
    const cpu: Record<string, number[]> = Object.fromEntries(builds.map((build) => [build.name, []]));
    for (const build of builds) await block(build, BLOCK / 2, next, authorization); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      // Each block's order alternates, so that drift in the machine's load falls on every variant alike.
      for (const build of order) cpu[build.name]!.push(await block(build, BLOCK, next, authorization));
    }
    const total = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0);
    const [off, only, on] = builds.map((build) => total(cpu[build.name]!) / rounds) as [number, number, number];
    const pairwise = median(cpu.on!.map((value, round) => value / cpu.off![round]!));
    const contextPairwise = median(cpu['context only']!.map((value, round) => value / cpu.off![round]!));
    const settings = Object.entries(process.env)
      .filter(([key]) => key.startsWith('OTEL_') && key !== 'OTEL_EXPORTER_OTLP_ENDPOINT')
      .map(([key, value]) => `${key}=${value}`)
      .join(' ');
    console.error(
      `products?sku ${settings || '(defaults)'}: CPU µs per read (app + pg client + HTTP client), ${rounds} ` +
        `alternating blocks of ${BLOCK}: off ${off.toFixed(1)}, context only ${only.toFixed(1)}, on ${on.toFixed(1)}; ` +
        `on/off ${(on / off).toFixed(3)} (median of the rounds' ${pairwise.toFixed(3)}), context only/off ` +
        `${(only / off).toFixed(3)} (median ${contextPairwise.toFixed(3)})`,
    );
  } catch (error) {
    console.error(error);
  } finally {
    await seedPool.end();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    const { shutdownTracing } = (await import(
      pathToFileURL(path.resolve(distDir, 'tracing/shutdown.js')).href
    )) as typeof Shutdown;
    await shutdownTracing().catch(() => undefined);
    await sink.stop();
  }
  process.exit(0);
}

await main();
