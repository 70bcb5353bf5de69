import http from 'node:http';
import { sampleRss } from './processes.js';
import { step } from './progress.js';
import { formatNumber, measurementOf, ratioOf, type BenchContext, type ScenarioResult } from './results.js';
import { mixedChecks, mixedStock, runMixed } from './scenario-6-mixed.js';

/** D39: 1,000 open Server-Sent Event streams (half filtered by one SKU) during scenario 6's mixed workload. */
const STREAMS = 1000;
const MIN_RATIO = 0.9;

/** Opens a stream and reads it (counting the bytes), as a screen would. */
function openStream(baseUrl: string, authorization: string, query: string): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/v1/events${query}`,
      { headers: { authorization, accept: 'text/event-stream', 'accept-encoding': 'gzip' }, agent: false },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`an event stream was answered ${response.statusCode}`));
          return;
        }
        response.resume();
        response.on('error', () => undefined);
        resolve(request);
      },
    );
    request.on('error', reject);
  });
}

/**
 * Scenario 18: scenario 6's mixed workload on its stock, once without streams and once with 1,000 streams open
 * (500 of them `sku=` one of the moved Products), the requests per second and latencies of both and the RSS.
 */
export async function streamsUnderLoad(ctx: BenchContext, unitKeys: readonly string[]): Promise<ScenarioResult> {
  const { service } = ctx;
  step('scenario 18: mixed workload without event streams');
  const without = await runMixed(ctx, unitKeys, { label: 'scenario 18 without streams', service, stock: mixedStock });
  step(`scenario 18: the same with ${STREAMS} event streams open`);
  const rssBefore = sampleRss(service.process.pid, 50).stop();
  const streams: http.ClientRequest[] = [];
  try {
    for (let opened = 0; opened < STREAMS; opened += 100) {
      const batch = Array.from({ length: 100 }, (_, index) => {
        const query = (opened + index) % 2 === 0 ? '' : `?sku=${encodeURIComponent(`${mixedStock.productPrefix}-1`)}`;
        return openStream(service.baseUrl, ctx.authorization, query);
      });
      streams.push(...(await Promise.all(batch)));
    }
    const rssOpen = sampleRss(service.process.pid, 50).stop();
    const withStreams = await runMixed(ctx, unitKeys, {
      label: 'scenario 18 with streams',
      service,
      stock: mixedStock,
    });
    const ratio = ratioOf(withStreams.measured.requestsPerSecond, without.measured.requestsPerSecond);
    const [errorCheck] = mixedChecks(withStreams);
    return {
      id: 18,
      title: `Mixed workload with ${STREAMS.toLocaleString('en-US')} open event streams (500 filtered by SKU)`,
      service: measurementOf(`service, ${STREAMS} streams`, withStreams.measured),
      ceiling: measurementOf('service, no streams', without.measured),
      targets: [
        errorCheck!,
        {
          target: `requests/s with streams ≥ ${MIN_RATIO} × without`,
          actual: ratio === undefined ? 'n/a' : formatNumber(ratio, 2),
          met: ratio !== undefined && ratio >= MIN_RATIO,
        },
      ],
      details: { streams: STREAMS, rssBeforeMb: rssBefore, rssOpenMb: rssOpen, without: without.measured },
      notes: [
        `Without streams ${formatNumber(without.measured.requestsPerSecond)} req/s (p50 ` +
          `${formatNumber(without.measured.p50Ms, 1)} ms), with ${STREAMS} streams ` +
          `${formatNumber(withStreams.measured.requestsPerSecond)} req/s (p50 ` +
          `${formatNumber(withStreams.measured.p50Ms, 1)} ms).`,
        `RSS ${formatNumber(rssBefore)} MB before the streams, ${formatNumber(rssOpen)} MB with them open, peak ` +
          `${formatNumber(withStreams.measured.peakRssMb ?? 0)} MB under load.`,
        'The second run starts from the stock the first left (the same shape, units moved and allocated).',
      ],
    };
  } finally {
    for (const stream of streams) stream.destroy();
  }
}
