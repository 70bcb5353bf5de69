import type { Server, ServerResponse } from 'node:http';

export interface Draining {
  /** From now on every answer not yet sent closes its connection. */
  start(): void;
  /** Whether start() was called: readiness answers 503 from then on (D36). */
  readonly started: boolean;
  /** Aborts at start(): open event streams end at once (D39), which would otherwise hold close() to its deadline. */
  readonly signal: AbortSignal;
}

/**
 * Lets close() finish while clients keep using their connections. A busy keep-alive connection never counts as
 * idle, so a client or load balancer that keeps sending on it would hold the server open until the shutdown
 * deadline cut whatever was in flight (found by the soak). Once draining starts, answers carry
 * `Connection: close`: each connection ends after its current request, and its client moves elsewhere.
 */
export function drainOnShutdown(server: Server): Draining {
  const unanswered = new Set<ServerResponse>();
  let draining = false;
  const started = new AbortController();
  server.prependListener('request', (_req, res) => {
    if (draining) {
      res.setHeader('Connection', 'close');
      return;
    }
    unanswered.add(res);
    res.once('close', () => unanswered.delete(res));
  });
  return {
    get started() {
      return draining;
    },
    signal: started.signal,
    start() {
      draining = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
      unanswered.clear();
      started.abort();
    },
  };
}
