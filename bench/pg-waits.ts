import type pg from 'pg';

export interface WaitProfile {
  readonly samples: number;
  /** Average number of the application's connections in each state (`active: CPU`, `active: Lock/tuple`, …). */
  readonly connectionsByState: Record<string, number>;
}

export interface WaitSampling {
  stop(): Promise<WaitProfile>;
}

/**
 * Samples pg_stat_activity for one application's connections to the run's databases (the bench database and the
 * ones named after it): how many are idle, running on the CPU, or waiting (and on what). Where a transaction's
 * time goes on the server side, without any change to the service.
 */
export function sampleWaits(pool: pg.Pool, applicationName: string, intervalMs = 50): WaitSampling {
  const totals = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async (): Promise<void> => {
    while (!stopped) {
      const { rows } = await pool
        .query<{ state: string; count: string }>(
          `SELECT CASE WHEN state = 'active' AND wait_event IS NULL THEN 'active: CPU'
                     WHEN state = 'active' THEN 'active: ' || wait_event_type || '/' || wait_event
                     WHEN wait_event_type = 'Client' THEN state
                     ELSE state || ': ' || COALESCE(wait_event_type || '/' || wait_event, 'CPU') END AS state,
                count(*)::text AS count
           FROM pg_stat_activity
          WHERE datname LIKE current_database() || '%' AND application_name = $1
          GROUP BY 1`,
          [applicationName],
        )
        // The database going away (end of the run, Ctrl+C) ends the sampling, not the runner.
        .catch(() => {
          stopped = true;
          return { rows: [] };
        });
      samples++;
      for (const row of rows) totals.set(row.state, (totals.get(row.state) ?? 0) + Number(row.count));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop(): Promise<WaitProfile> {
      stopped = true;
      await loop.catch(() => undefined);
      const connectionsByState: Record<string, number> = {};
      for (const [state, total] of [...totals].sort((a, b) => b[1] - a[1])) {
        connectionsByState[state] = Math.round((total / Math.max(1, samples)) * 100) / 100;
      }
      return { samples, connectionsByState };
    },
  };
}
