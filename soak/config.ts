/** Soak settings, read once from the environment. */
export interface SoakConfig {
  readonly minutes: number;
  /** autocannon connections to the round-robin proxy. */
  readonly connections: number;
  /** A fault every this many seconds, the first one interval into the run. */
  readonly faultIntervalSeconds: number;
  /**
   * `direct`: the instances on PostgreSQL itself. `pgbouncer` (issue 17): through a PgBouncer in transaction mode
   * with DATABASE_POOL_MODE=transaction, migrations and LISTEN on the direct URL. `pgbouncer-replica`: the same in
   * front of a PostgreSQL 15 primary, and reads on its streaming replica (DATABASE_READ_URL), which is stopped too.
   * Issue 37 (D41), with events relayed to RabbitMQ: `failover`: a PostgreSQL 15 primary with a synchronous replica
   * behind a TCP forwarder; the primary is killed, the replica promoted and the forwarder moved. `replicas`: reads on
   * two replicas behind a round-robin TCP balancer, one of them paused now and then.
   */
  readonly topology: SoakTopology;
  /** Whether every setting is the default: only such a run rewrites soak/results.json and RELIABILITY.md. */
  readonly full: boolean;
}

export type SoakTopology = 'direct' | 'pgbouncer' | 'pgbouncer-replica' | 'failover' | 'replicas';
const TOPOLOGIES: readonly SoakTopology[] = ['direct', 'pgbouncer', 'pgbouncer-replica', 'failover', 'replicas'];

export const SOAK_DEFAULTS = { minutes: 10, connections: 50, faultIntervalSeconds: 60 } as const;

function positiveNumber(name: string, fallback: number, options: { integer: boolean; minimum: number }): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < options.minimum || (options.integer && !Number.isInteger(value))) {
    const what = options.integer ? 'a whole number' : 'a number';
    throw new Error(`${name} must be ${what} of at least ${options.minimum}, not '${raw}'`);
  }
  return value;
}

export function loadSoakConfig(): SoakConfig {
  const minutes = positiveNumber('SOAK_MINUTES', SOAK_DEFAULTS.minutes, { integer: false, minimum: 0.5 });
  const connections = positiveNumber('SOAK_CONNECTIONS', SOAK_DEFAULTS.connections, { integer: true, minimum: 1 });
  // A fault needs time to recover (a database restart takes about ten seconds) before the next one.
  const faultIntervalSeconds = positiveNumber('SOAK_FAULT_INTERVAL_SECONDS', SOAK_DEFAULTS.faultIntervalSeconds, {
    integer: true,
    minimum: 20,
  });
  const topology = (process.env.SOAK_TOPOLOGY?.trim() || 'direct') as SoakTopology;
  if (!TOPOLOGIES.includes(topology)) {
    throw new Error(`SOAK_TOPOLOGY must be one of ${TOPOLOGIES.join(', ')}, not '${topology}'`);
  }
  const full =
    topology === 'direct' &&
    minutes === SOAK_DEFAULTS.minutes &&
    connections === SOAK_DEFAULTS.connections &&
    faultIntervalSeconds === SOAK_DEFAULTS.faultIntervalSeconds;
  return { minutes, connections, faultIntervalSeconds, topology, full };
}
