import { register } from 'node:module';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { onTracingShutdown } from './shutdown.js';

const DEFAULT_SERVICE_NAME = 'inventory-service';

function namesItsService(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
}

/**
 * Starts the OpenTelemetry SDK (D36), configured by the standard OTEL_* settings: exporter, protocol, sampler,
 * resource, propagators. Loaded only when tracing is on, and before the module it instruments (`pg`): a module is
 * wrapped as it is loaded, so the loader hook goes in first, limited to the modules the instrumentations name.
 * Traces only: metrics stay on /actuator/prometheus and logs on stdout.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const sdk = new NodeSDK({
    serviceName: namesItsService(env) ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    // Requests get their server span from the app itself (server-spans.ts), at a fraction of what the http and
    // Express instrumentations cost. The relay's, sequencer's and feed's polls have no request behind them: only
    // statements within a trace.
    instrumentations: [new PgInstrumentation({ requireParentSpan: true })],
  });
  sdk.start();
  onTracingShutdown(() => sdk.shutdown());
  await waitForAllMessagesAcknowledged();
}
