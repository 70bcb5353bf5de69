import { tracingRequested } from './tracing/settings.js';

// The process entry. With tracing on (D36), the SDK starts before the service's modules load, so that their
// tracers are the SDK's from the start; with it off, not one of its modules is loaded.
if (tracingRequested(process.env)) {
  const { startTracing } = await import('./tracing/sdk.js');
  startTracing();
}
await import('./server.js');
