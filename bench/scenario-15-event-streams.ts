import http from 'node:http';
import { watchCpu } from './cpu-share.js';
import { sampleRss } from './processes.js';
import { step } from './progress.js';
import { formatNumber, median, type BenchContext, type ScenarioResult } from './results.js';

/** Issue 27's figure: idle Server-Sent Event streams on one process (EVENT_STREAMS_MAX, 1000 by default). */
const CLIENTS = 1000;
const IDLE_SECONDS = 10;
const PIECE = {
  '@class': 'org.openwms.core.units.api.Piece',
  unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'],
};

interface Listener {
  readonly request: http.ClientRequest;
  /** When this client read the event that names `marker`. */
  arrivedAt?: number;
}

function listen(baseUrl: string, authorization: string, marker: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const listener: { request?: http.ClientRequest; arrivedAt?: number } = {};
    listener.request = http.get(
      `${baseUrl}/v1/events`,
      { headers: { authorization, accept: 'text/event-stream' }, agent: false },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`an event stream was answered ${response.statusCode}`));
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (text: string) => {
          if (listener.arrivedAt === undefined && text.includes(marker)) listener.arrivedAt = performance.now();
        });
        response.on('error', () => undefined);
        resolve(listener as Listener);
      },
    );
    listener.request.on('error', (error) => (listener.arrivedAt === undefined ? reject(error) : undefined));
  });
}

/**
 * Scenario 15: 1,000 streams open and idle on the service, its RSS and CPU over an idle window, then the delay from
 * a commit (a product created through the API) to the last stream that shows its event.
 */
export async function eventStreams(ctx: BenchContext): Promise<ScenarioResult> {
  step(`scenario 15: ${CLIENTS} idle Server-Sent Event streams`);
  const pid = ctx.service.process.pid;
  const rssBefore = sampleRss(pid, 50).stop();
  const sku = `SSE-${Date.now()}`;
  const listeners: Listener[] = [];
  try {
    for (let opened = 0; opened < CLIENTS; opened += 100) {
      listeners.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, () => listen(ctx.service.baseUrl, ctx.authorization, JSON.stringify(sku))),
        )),
      );
    }
    const rss = sampleRss(pid, 100);
    const cpu = watchCpu(pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const cpuShare = cpu.stop();
    const idleRssMb = rss.stop();

    const committedAt = performance.now();
    const created = await fetch(`${ctx.service.baseUrl}/v1/products`, {
      method: 'POST',
      headers: { authorization: ctx.authorization, 'content-type': 'application/json' },
      body: JSON.stringify([{ sku, baseUnit: { ...PIECE, magnitude: 1 } }]),
    });
    if (created.status !== 201) throw new Error(`scenario 15: creating the product answered ${created.status}`);
    for (const deadline = performance.now() + 30_000; listeners.some((listener) => !listener.arrivedAt);) {
      if (performance.now() > deadline) throw new Error('scenario 15: not every stream showed the event within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const delays = listeners.map((listener) => listener.arrivedAt! - committedAt);
    const last = Math.max(...delays);
    const idleCpuMsPerSecond = cpuShare ? cpuShare.target * 10 : undefined;
    return {
      id: 15,
      title: `${CLIENTS.toLocaleString('en-US')} idle Server-Sent Event streams on one process`,
      service: {
        label: `service, ${IDLE_SECONDS} s idle`,
        throughput: CLIENTS,
        unit: 'streams',
        p50Ms: median(delays),
        p99Ms: last,
        peakRssMb: idleRssMb,
        cpu: cpuShare,
      },
      targets: [],
      details: { clients: CLIENTS, idleSeconds: IDLE_SECONDS, rssBeforeMb: rssBefore, lastDelayMs: last },
      notes: [
        `RSS ${formatNumber(rssBefore)} MB before the streams, ${formatNumber(idleRssMb)} MB with ${CLIENTS} open.`,
        `Service CPU while idle: ${idleCpuMsPerSecond === undefined ? 'n/a' : `${formatNumber(idleCpuMsPerSecond, 1)} ms per second`}.`,
        `From the create request to the last of the ${CLIENTS} streams showing its event: ${formatNumber(last)} ms ` +
          `(p50 ${formatNumber(median(delays))} ms; p50 and p99 above are these delays).`,
      ],
    };
  } finally {
    for (const listener of listeners) listener.request.destroy();
  }
}
