import type { Request, RequestHandler } from 'express';
import type pg from 'pg';
import client from 'prom-client';
import { metricsOfInstance } from '../cluster.js';

export interface Metrics {
  readonly registry: client.Registry;
  /** The exposition of the whole instance: with WEB_CONCURRENCY, every worker's metrics together. */
  readonly text: () => Promise<string>;
  readonly observeRequests: RequestHandler;
}

/**
 * Default process metrics, request durations by route pattern (never the raw path), and pool gauges. An answer
 * given before routing (a 401, a 405) is labelled with the pattern `routeOf` finds for it, so that a refused
 * call to a real route stays apart from a scan of paths no route has (`unmatched`).
 */
export function createMetrics(pool: pg.Pool, routeOf: (req: Request) => string | undefined): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  // Issue 28: gauges named `_total` fail `promtool check metrics` (the suffix is for counters); each total is the sum
  // of its by-type gauge (`nodejs_active_handles` …), which stays.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }

  const duration = new client.Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const gauges = [
    // No `_total`: Prometheus reserves that suffix for counters, and this goes up and down.
    ['db_pool_connections', 'Connections held by the pool, busy and idle', () => pool.totalCount],
    ['db_pool_connections_idle', 'Idle connections in the pool', () => pool.idleCount],
    ['db_pool_requests_waiting', 'Requests waiting for a pool connection', () => pool.waitingCount],
  ] as const;
  for (const [name, help, read] of gauges) {
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }

  // Observed directly rather than through `startTimer`, whose two closures, hrtime pairs and merged label object per
  // request gave the same figure (issue 38 item 4).
  const observeRequests: RequestHandler = (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      duration.observe(
        { method: req.method, route: routeOf(req) ?? 'unmatched', status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
  return { registry, text: metricsOfInstance(registry), observeRequests };
}
