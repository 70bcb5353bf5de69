import type pg from 'pg';
import { probeConnection } from '../db/pool.js';

const PROBE_TIMEOUT_MS = 2000;
// Longer than any probe interval, so the probe keeps its connection, also while the server takes no new ones.
const PROBE_IDLE_MS = 60_000;

/**
 * Whether PostgreSQL answers, asked on a connection of the probe's own: through the request pool, a probe waits
 * behind every queued request when the pool is busy and reports a database that is up as DOWN. Concurrent probes
 * share one query, so a flood of health checks costs one connection and one query at a time. A probe answers
 * within 2 s: a server that does not is DOWN, and the connection that waited for it is discarded.
 */
export function databaseProbe(requestPool: pg.Pool): () => Promise<boolean> {
  const pool = probeConnection(requestPool, {
    timeoutMs: PROBE_TIMEOUT_MS,
    idleMs: PROBE_IDLE_MS,
    applicationName: 'inventory-service-health',
  });
  let running: Promise<boolean> | undefined;
  const probe = async (): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([
        pool.query('SELECT 1').then(
          () => true,
          () => false,
        ),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
      running = undefined;
    }
  };
  return () => (running ??= probe());
}
