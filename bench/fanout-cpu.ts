/**
 * Issue 33, scenario 18's stream cost at a fixed write rate, for comparing builds on a loaded machine: the service's
 * CPU per second with no stream open and with 1,000 gzip SSE streams open (half `sku=` filtered), while the same
 * product writes run at a fixed rate; and the CPU of this process, which reads all the streams.
 * Usage: BENCH_DATABASE_URL=postgres://… npx tsx bench/fanout-cpu.ts <main.js> [<main.js> …] (alternate builds)
 * BENCH_CPU_PROF=1 writes each service's CPU profile to bench/results/profiles/fanout-<n>/.
 * Settings: FANOUT_GZIP (1; 0: uncompressed streams), FANOUT_STREAMS (1000), FANOUT_RATE (posts/s, 25), FANOUT_LINES (events per tick, 4), FANOUT_SECONDS (20).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { createGunzip } from 'node:zlib';
import { openBenchDatabase } from './database.js';
import { bearerToken, JWT_SECRET } from './load.js';
import { installCleanupHandlers, runToExit, stopProcess } from './processes.js';
import { startService } from './service.js';

const STREAMS = Number(process.env.FANOUT_STREAMS ?? 1000);
const RATE = Number(process.env.FANOUT_RATE ?? 25);
const LINES = Number(process.env.FANOUT_LINES ?? 4);
const SECONDS = Number(process.env.FANOUT_SECONDS ?? 20);
const HOT_SKU = 'F-HOT';
/** FANOUT_GZIP=0: the streams ask for no compression (what gzip costs the service). */
const GZIP = process.env.FANOUT_GZIP !== '0';
const authorization = bearerToken();

function ticksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function line(sku: string, label: string): string {
  return JSON.stringify({
    sku,
    label,
    description: 'Carton of twelve, stacked on EUR pallets',
    baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 },
    stockZone: 'A',
  });
}

/** When each post of the hot SKU was answered, by its label, to time its event's arrival on the watched streams. */
const answeredAt = new Map<string, number>();
const delays: number[] = [];
let refused = 0;

function request(url: string, method: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sent = http.request(
      url,
      { method, headers: { authorization, 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          // A refused write (503 on a loaded machine) is counted, not fatal: the CPU per second is what is compared.
          if ((response.statusCode ?? 500) >= 300) refused++;
          resolve(text);
        });
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

let hotKey = '';

/** One tick of the writes: the hot SKU updated (every stream gets it), and LINES - 1 new Products in one POST. */
async function post(baseUrl: string, n: number): Promise<void> {
  const hot = `hot ${n}`;
  if (n === 0) {
    await request(`${baseUrl}/v1/products`, 'POST', `[${line(HOT_SKU, hot)}]`);
    const created = await request(`${baseUrl}/v1/products?sku=${HOT_SKU}`, 'GET', '');
    hotKey = /"pKey":"([^"]+)"/.exec(created)?.[1] ?? '';
    return;
  }
  const products = Array.from({ length: LINES - 1 }, (_, i) => line(`F-${n}-${i}`, `Article ${n}-${i}`));
  const update = line(HOT_SKU, hot).replace('{', `{"pKey":"${hotKey}",`);
  await Promise.all([
    request(`${baseUrl}/v1/products`, 'PUT', update).then(() => void answeredAt.set(hot, Date.now())),
    request(`${baseUrl}/v1/products`, 'POST', `[${products.join(',')}]`),
  ]);
}

/** Opens a stream and reads it; a watched one is unzipped and the arrival of each hot event timed. */
function openStream(baseUrl: string, query: string, watched: boolean): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/v1/events${query}`,
      {
        headers: { authorization, accept: 'text/event-stream', 'accept-encoding': GZIP ? 'gzip' : 'identity' },
        agent: false,
      },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`an event stream was answered ${response.statusCode}`));
          return;
        }
        if (watched) {
          const text = GZIP ? response.pipe(createGunzip()) : response;
          text.setEncoding('utf8');
          text.on('data', (chunk: string) => {
            const now = Date.now();
            for (const match of chunk.matchAll(/"label":"(hot \d+)"/g)) {
              const at = answeredAt.get(match[1]!);
              if (at !== undefined) delays.push(now - at);
            }
          });
          text.on('error', () => undefined);
        } else response.resume();
        response.on('error', () => undefined);
        resolve(request);
      },
    );
    request.on('error', reject);
  });
}

/** Posts at RATE per second for SECONDS; answers the service's and this process's CPU ms per second meanwhile. */
async function measure(baseUrl: string, pid: number, first: number): Promise<{ service: number; runner: number }> {
  const ticks = ticksOf(pid);
  const own = ownCpuMs();
  const started = Date.now();
  const posts: Promise<void>[] = [];
  for (let n = 0; n < RATE * SECONDS; n++) {
    const due = started + (n * 1000) / RATE;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    posts.push(post(baseUrl, first + n));
  }
  await Promise.all(posts);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const seconds = (Date.now() - started) / 1000;
  return { service: ((ticksOf(pid) - ticks) * 10) / seconds, runner: (ownCpuMs() - own) / seconds };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function main(): Promise<number> {
  const db = await openBenchDatabase(process.env.BENCH_DATABASE_URL);
  let index = 0;
  for (const main of process.argv.slice(2)) {
    index++;
    const url = await db.createDatabase(`fanout${index}`);
    const service = await startService({
      databaseUrl: url,
      jwtSecret: JWT_SECRET,
      cpuProfile: process.env.BENCH_CPU_PROF === '1',
      main,
      name: `fanout-${index}`,
    });
    const pid = service.process.pid;
    await post(service.baseUrl, 0);
    const load = os.loadavg()[0]!.toFixed(1);
    const quiet = await measure(service.baseUrl, pid, 1_000_000 * index);
    const streams: http.ClientRequest[] = [];
    for (let opened = 0; opened < STREAMS; opened += 100) {
      const batch = Array.from({ length: 100 }, (_, i) => {
        const n = opened + i;
        return openStream(service.baseUrl, n % 2 === 0 ? '' : `?sku=${HOT_SKU}`, n < 2);
      });
      streams.push(...(await Promise.all(batch)));
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    delays.length = 0;
    refused = 0;
    const loaded = await measure(service.baseUrl, pid, 1_000_000 * index + 500_000);
    for (const stream of streams) stream.destroy();
    await stopProcess(service.process);
    console.log(
      `${main} load ${load}–${os.loadavg()[0]!.toFixed(1)}: service CPU ${quiet.service.toFixed(0)} ms/s without ` +
        `streams, ${loaded.service.toFixed(0)} ms/s with ${STREAMS} (streams: ${(loaded.service - quiet.service).toFixed(0)} ms/s); ` +
        `runner ${quiet.runner.toFixed(0)} → ${loaded.runner.toFixed(0)} ms/s; hot event 201→reader p50 ` +
        `${percentile(delays, 50)} ms, p99 ${percentile(delays, 99)} ms, max ${percentile(delays, 100)} ms (${delays.length}); ${refused} writes refused`,
    );
  }
  return 0;
}

installCleanupHandlers();
runToExit(main, 'fanout-cpu');
