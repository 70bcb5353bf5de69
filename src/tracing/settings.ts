const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/**
 * D36: tracing is on only when an OTLP endpoint is configured (for all signals or for traces alone), unless the
 * standard OTEL_SDK_DISABLED turns it off. Read before anything else is loaded, so it depends on nothing.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const endpoint = isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  return endpoint && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}
