/**
 * The service's CPU per read of two builds, in one process, alternating (issue 38 item 4): each build's createApp
 * on a pool of its own, driven over loopback HTTP by a keep-alive client in the same process, in blocks of
 * `BLOCK` requests A B B A …; the CPU of each block (process.cpuUsage: app, pg client, HTTP client) is divided by
 * its requests. The client and pg are the same code for both, so the difference between the builds is their own;
 * alternating small blocks keeps a loaded machine's drift out of it. PostgreSQL's CPU is not counted.
 * Usage: npx tsx bench/read-cost.ts <dist dir A> <dist dir B> [rounds] > /dev/null   (log lines go to stdout)
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type * as App from '../src/app.js';
import type * as Configuration from '../src/config.js';
import type * as Runtime from '../src/events/runtime.js';
import type * as Logging from '../src/logger.js';
import { migrate } from '../src/db/migrate.js';
import { quietLogger } from './database.js';
import { bearerToken, JWT_SECRET } from './load.js';
import { productSku, sampleUnitKeys, seedMasterData, seedProducts, seedStock } from './seed.js';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PRODUCTS = 5_000;
const BLOCK = Number(process.env.READ_COST_BLOCK ?? 1_000);
const IN_FLIGHT = 16;

interface Build {
  readonly name: string;
  readonly port: number;
}

async function startBuild(name: string, distDir: string, databaseUrl: string): Promise<Build> {
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
  });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => undefined); // the database is dropped under it at the end
  const { startEvents } = await load<typeof Runtime>('events/runtime.js');
  const logger = createLogger(config);
  const app = createApp({ config, pool, logger, events: startEvents(pool, config, logger) });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { name, port: (server.address() as AddressInfo).port };
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
  const [distA, distB, roundsText] = process.argv.slice(2);
  if (!distA || !distB) throw new Error('usage: read-cost.ts <dist dir A> <dist dir B> [rounds]');
  const rounds = Number(roundsText ?? 6);
  const name = `inventory_read_cost_${process.pid}`;
  const admin = new pg.Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const seedPool = new pg.Pool({ connectionString: url.href, max: 4 });
  try {
    await migrate(seedPool, quietLogger());
    await seedMasterData(seedPool);
    await seedProducts(seedPool, 'P', 1, PRODUCTS);
    await seedStock(seedPool, {
      productPrefix: 'P',
      products: PRODUCTS,
      tuPrefix: 'TU',
      loadUnits: 500,
      unitsPerLoadUnit: 10,
      unitQuantity: 10,
    });
    await seedPool.query('VACUUM ANALYZE');
    const unitKeys = await sampleUnitKeys(seedPool, 'TU', 5_000);
    const builds = [await startBuild('A', distA, url.href), await startBuild('B', distB, url.href)];
    const authorization = bearerToken();
    const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
    const reads = {
      'products?sku': () => `/v1/products?sku=${productSku('P', 1 + Math.floor(Math.random() * PRODUCTS))}`,
      'packaging-units/{pKey}': () => `/v1/packaging-units/${pick(unitKeys)}`,
    };
    for (const [label, next] of Object.entries(reads)) {
      const cpu: Record<string, number[]> = { A: [], B: [] };
      for (const build of builds) await block(build, BLOCK / 2, next, authorization); // warm-up
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? builds : [...builds].reverse();
        for (const build of order) cpu[build.name]!.push(await block(build, BLOCK, next, authorization));
      }
      const total = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0);
      const [a, b] = [total(cpu.A!) / rounds, total(cpu.B!) / rounds];
      const pairwise = median(cpu.B!.map((value, round) => value / cpu.A![round]!));
      console.error(
        `${label}: CPU µs per read (app + pg client + HTTP client), ${rounds} alternating blocks of ${BLOCK}: ` +
          `A ${a.toFixed(1)}, B ${b.toFixed(1)}, B/A ${(b / a).toFixed(3)}; median of the rounds' B/A ${pairwise.toFixed(3)}`,
      );
    }
  } catch (error) {
    console.error(error);
  } finally {
    await seedPool.end();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  process.exit(0);
}

await main();
