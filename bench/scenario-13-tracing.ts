import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JWT_SECRET } from './load.js';
import { stopProcess } from './processes.js';
import { step } from './progress.js';
import { formatNumber, ratioOf, type BenchContext, type Measurement, type ScenarioResult } from './results.js';
import { productsBySku } from './scenario-1-products-by-sku.js';
import { allocation } from './scenario-4-allocation.js';
import { startService } from './service.js';

interface SpanSink {
  readonly endpoint: string;
  readonly exports: () => { requests: number; bytes: number };
  close(): Promise<void>;
}

/** An OTLP/HTTP collector stand-in on 127.0.0.1: reads each export whole and accepts it. */
async function startSpanSink(): Promise<SpanSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => ({ requests, bytes }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The service's CPU per unit of work: percent of one core over the run, at its throughput. */
function cpuMsPer(measurement: Measurement): number | undefined {
  const cpu = measurement.cpu?.target;
  return cpu === undefined || measurement.throughput <= 0 ? undefined : (cpu * 10) / measurement.throughput;
}

function comparison(what: string, off: Measurement, on: Measurement): string {
  const offCpu = cpuMsPer(off);
  const onCpu = cpuMsPer(on);
  const cpu =
    offCpu === undefined || onCpu === undefined
      ? ''
      : `; service CPU ${offCpu.toFixed(2)} → ${onCpu.toFixed(2)} ms per ${on.unit.split('/')[0]} (${((onCpu / offCpu - 1) * 100).toFixed(0)} %)`;
  return (
    `${what}: ${formatNumber(off.throughput)} ${off.unit} off, ${formatNumber(on.throughput)} on ` +
    `(${ratioOf(on.throughput, off.throughput)?.toFixed(2) ?? '–'} ×); p99 ${off.p99Ms?.toFixed(1) ?? '–'} → ` +
    `${on.p99Ms?.toFixed(1) ?? '–'} ms${cpu}`
  );
}

/**
 * Scenario 13 (issue 28): scenarios 1 and 4 against the run's instance, with tracing off, and against a second
 * instance with tracing on (every request sampled, spans exported as OTLP/HTTP protobuf to a sink in this process).
 * Measured off, on, on, off, so that a machine whose load drifts during the scenario weighs on both sides alike.
 */
export async function tracingCost(bench: BenchContext, allocationProducts: number): Promise<ScenarioResult> {
  const sink = await startSpanSink();
  const traced = await startService({
    databaseUrl: bench.db.url,
    jwtSecret: JWT_SECRET,
    cpuProfile: bench.config.cpuProfile,
    main: bench.config.serviceMain,
    env: { ...bench.config.serviceEnv, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint },
    name: 'service-traced',
  });
  try {
    const tracedBench = { ...bench, service: traced };
    step('scenario 13: scenario 1 with tracing off, then on');
    const readsOff = await productsBySku(bench);
    const readsOn = await productsBySku(tracedBench);
    step('scenario 13: scenario 4 with tracing on, then off');
    const allocationsOn = await allocation(tracedBench, allocationProducts);
    const allocationsOff = await allocation(bench, allocationProducts);
    return {
      id: 13,
      title: 'Scenarios 1 and 4 with tracing on (OTLP/HTTP to a local sink) against off',
      service: { ...readsOn.service, label: 'scenario 1, tracing on' },
      ceiling: { ...readsOff.service, label: 'scenario 1, tracing off' },
      ratio: ratioOf(readsOn.service.throughput, readsOff.service.throughput),
      ratioBasis: 'req/s, tracing on ÷ off',
      targets: [],
      extra: [
        { ...allocationsOn.service, label: 'scenario 4, tracing on' },
        { ...allocationsOff.service, label: 'scenario 4, tracing off' },
      ],
      details: {
        readsOff: readsOff.details,
        readsOn: readsOn.details,
        allocationsOn: allocationsOn.details,
        allocationsOff: allocationsOff.details,
        exported: sink.exports(),
      },
      notes: [
        comparison('Scenario 1', readsOff.service, readsOn.service),
        comparison('Scenario 4', allocationsOff.service, allocationsOn.service),
        `The sink received ${formatNumber(sink.exports().requests)} exports, ${formatNumber(sink.exports().bytes / 1024 ** 2, 1)} MB.`,
      ],
    };
  } finally {
    await stopProcess(traced.process);
    await sink.close();
  }
}
