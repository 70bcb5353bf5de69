let flush: (() => Promise<void>) | undefined;

/** Set by the SDK when tracing starts: exports what is still buffered and stops. */
export function onTracingShutdown(shutdown: () => Promise<void>): void {
  flush = shutdown;
}

/** Exports the spans still buffered before the process exits; nothing to do with tracing off. */
export async function shutdownTracing(): Promise<void> {
  await flush?.();
}
