import { NodeSDK } from '@opentelemetry/sdk-node';
import { traceStatements } from './pg-spans.js';
import { onTracingShutdown } from './shutdown.js';

const DEFAULT_SERVICE_NAME = 'inventory-service';

function namesItsService(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
}

/**
 * Starts the OpenTelemetry SDK (D36), configured by the standard OTEL_* settings: exporter, protocol, sampler,
 * resource, propagators. Loaded only when tracing is on. Traces only: metrics stay on /actuator/prometheus and logs
 * on stdout. No instrumentation package: requests get their server span from the app (server-spans.ts) and
 * statements theirs from pg-spans.ts, each at a fraction of what the instrumentations cost (bench/notes.md,
 * issue 38).
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): void {
  const sdk = new NodeSDK({
    serviceName: namesItsService(env) ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  traceStatements();
  onTracingShutdown(() => sdk.shutdown());
}
