/** Scenario sizes and run settings, read once from the environment. The defaults are the issue's sizes. */
export interface BenchConfig {
  /** Server to use instead of the embedded PostgreSQL (the runner creates and drops its own databases there). */
  readonly databaseUrl: string | undefined;
  /** Products seeded for scenario 1 and streamed at the first size of scenario 5. */
  readonly products: number;
  /** PackagingUnits seeded for scenario 2 (in LoadUnits of ten, one Product per LoadUnit). */
  readonly units: number;
  /** Products in the one bulk request of scenario 3. */
  readonly bulkProducts: number;
  /** Measured bulk requests (and raw inserts) in scenario 3; the median counts. */
  readonly bulkRuns: number;
  /** Allocatable PackagingUnits of scenario 4. */
  readonly allocationUnits: number;
  /** Products in the database for the second stream of scenario 5. */
  readonly streamProducts: number;
  /** Products in the larger streamed NDJSON import of scenario 7 (the smaller is 100,000). */
  readonly importProducts: number;
  /** Units in the streamed NDJSON stock intake of scenario 14 (100 per TransportUnit). */
  readonly intakeUnits: number;
  /** Old events in the outbox that scenario 17 prunes while writers run (20 parts). */
  readonly pruneEvents: number;
  /** Events, and ledger rows, scenario 17 writes to measure WAL and space; reported per 1,000,000. */
  readonly walRows: number;
  /** Seconds per measured load run (scenarios 1, 2, 4). */
  readonly duration: number;
  /** Seconds of the mixed workload (scenario 6). */
  readonly mixedDuration: number;
  /** Seconds of writes while the relay publishes (scenario 16). */
  readonly relayDuration: number;
  /** Seconds of unmeasured load before each measured run (JIT, pool connections, caches). */
  readonly warmup: number;
  readonly connections: number;
  /** Concurrent clients of scenario 4 and of pgbench. */
  readonly allocationClients: number;
  readonly pgbenchScale: number;
  /** Scenario numbers to run; the others are skipped (and reported as such). */
  readonly scenarios: readonly number[];
  /** Start the service and the ceiling app with --cpu-prof; profiles land in bench/results/profiles/. */
  readonly cpuProfile: boolean;
  /** Scenario 1 also against an instance verifying RS256 tokens with a JWKS (issue 36). */
  readonly jwks: boolean;
  /** Scenario 14 runs its intake with an Idempotency-Key first and the one without second (issue 34). */
  readonly keyedFirst: boolean;
  /** Another build of the service to measure (an experiment with a change to src/); default dist/main.js. */
  readonly serviceMain: string | undefined;
  /** Extra environment of the service, e.g. DB_POOL_MAX=32, for trying a setting. */
  readonly serviceEnv: Record<string, string>;
  /** The RabbitMQ of the events scenarios (8, 9, 16, 17); they are skipped when it does not answer. */
  readonly amqpUrl: string;
  /** Every size the issue's and no experiment (profiling, another build, extra settings): figures to keep. */
  readonly issueSizes: boolean;
  /** Every scenario at the issue's sizes: only such a run rewrites BENCHMARKS.md and bench/results.json whole. */
  readonly full: boolean;
}

export const DEFAULTS = {
  products: 100_000,
  units: 1_000_000,
  bulkProducts: 100_000,
  bulkRuns: 3,
  allocationUnits: 10_000,
  streamProducts: 1_000_000,
  importProducts: 1_000_000,
  intakeUnits: 1_000_000,
  pruneEvents: 2_000_000,
  walRows: 250_000,
  duration: 10,
  mixedDuration: 30,
  relayDuration: 60,
  warmup: 2,
  connections: 50,
  allocationClients: 32,
  pgbenchScale: 32,
} as const;

/** The environment variable of each setting and what it changes, for the messages and BENCHMARKS.md. */
export const VARIABLES: Record<keyof typeof DEFAULTS, { name: string; meaning: string }> = {
  products: { name: 'BENCH_PRODUCTS', meaning: 'products seeded for scenario 1 (and the first size of scenario 5)' },
  units: { name: 'BENCH_UNITS', meaning: 'PackagingUnits seeded for scenario 2 (10 per LoadUnit)' },
  bulkProducts: { name: 'BENCH_BULK_PRODUCTS', meaning: 'products in the one bulk request of scenarios 3 and 9' },
  bulkRuns: {
    name: 'BENCH_BULK_RUNS',
    meaning: 'measured bulk requests (and raw inserts) in scenarios 3 and 9; the median counts',
  },
  allocationUnits: {
    name: 'BENCH_ALLOCATION_UNITS',
    meaning:
      'allocatable units of scenario 4 (100 per product); a quarter of it, reserved whole, for the picks of scenario 23',
  },
  streamProducts: {
    name: 'BENCH_STREAM_PRODUCTS',
    meaning: 'products in the table for the second stream of scenario 5',
  },
  importProducts: {
    name: 'BENCH_IMPORT_PRODUCTS',
    meaning: 'products in the larger streamed NDJSON import of scenario 7 (the smaller is 100,000)',
  },
  intakeUnits: {
    name: 'BENCH_INTAKE_UNITS',
    meaning: 'units in the streamed NDJSON stock intake of scenario 14 (100 per TransportUnit)',
  },
  pruneEvents: {
    name: 'BENCH_PRUNE_EVENTS',
    meaning: 'old published events in the outbox (in 20 parts) that scenario 17 prunes while 4 writers run',
  },
  walRows: {
    name: 'BENCH_WAL_ROWS',
    meaning:
      'events, and ledger rows, scenario 17 writes to measure WAL and space, reported per 1,000,000 (scaled linearly)',
  },
  duration: {
    name: 'BENCH_DURATION',
    meaning: 'seconds of each measured load run (scenarios 1, 2, 4, 23 and pgbench)',
  },
  mixedDuration: { name: 'BENCH_MIXED_DURATION', meaning: 'seconds of the mixed workload (scenarios 6 and 8)' },
  relayDuration: {
    name: 'BENCH_RELAY_DURATION',
    meaning: 'seconds of bulk writes while one instance relays (scenario 16)',
  },
  warmup: { name: 'BENCH_WARMUP', meaning: 'seconds of unmeasured load before each measured run (0: none)' },
  connections: { name: 'BENCH_CONNECTIONS', meaning: 'autocannon connections (scenarios 1, 2, 6, 8)' },
  allocationClients: {
    name: 'BENCH_ALLOCATION_CLIENTS',
    meaning: 'concurrent clients of scenarios 4 and 23 and of pgbench',
  },
  pgbenchScale: { name: 'BENCH_PGBENCH_SCALE', meaning: 'pgbench -i scale factor (one branch row per client at 32)' },
};

/**
 * The scenarios there are: 7 is the streamed NDJSON import (issue 14); 8 and 9 are the events scenarios (issue 12);
 * 10 is scenario 1 on WEB_CONCURRENCY=2 workers (issue 14); 11 is scenario 1 with and without a read replica, on a
 * PostgreSQL 15 primary and replica of its own (issue 17); 12 is stock levels (issue 24); 13 is scenarios 1
 * and 4 with tracing on and off (issue 28); 14 is the stock intake (issue 26); 15 is 1,000 idle Server-Sent Event
 * streams (issue 27); 16 is the relay under 60 s of writes (issue 29); 17 is pruning old events while writers run,
 * and WAL and space per event and ledger row (issue 29); 19 is numbering a 1,000,000-event backlog (issue 33); 20 is
 * `at=` on a Product with 100,000 ledger rows (issue 35); 21 is 50,000 reservations expiring at once (issue 35);
 * 18 is scenario 6 with 1,000 open SSE streams (issue 33); 22 is one 60 MB PUT /v1/location-groups with /index
 * asked every 100 ms (issue 34); 23 is picks, half into a LoadUnit, half onto a Location (issue 38).
 */
export const ALL_SCENARIOS: readonly number[] = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
];
/** Scenario 8 is scenario 6 with events published; its figures are read against 6's, of the same run. */
const BROUGHT_ALONG: Record<number, readonly number[]> = { 8: [6] };
const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** Settings that are not sizes. */
export const OTHER_VARIABLES: readonly { name: string; fallback: string; meaning: string }[] = [
  {
    name: 'BENCH_DATABASE_URL',
    fallback: 'unset',
    meaning: 'a PostgreSQL server to use (fresh databases are created and dropped); unset: an embedded PostgreSQL 17',
  },
  {
    name: 'BENCH_SERVICE_MAIN',
    fallback: 'dist/main.js',
    meaning: 'another build of the service to measure, for trying a change before it lands in src/',
  },
  {
    name: 'BENCH_SERVICE_ENV',
    fallback: 'unset',
    meaning: 'extra settings for the service, e.g. `DB_POOL_MAX=32,LOG_LEVEL=warn`, for trying one',
  },
  {
    name: 'BENCH_SCENARIOS',
    fallback: ALL_SCENARIOS.join(','),
    meaning:
      'which scenarios to run, e.g. `1,2`; 1 also runs its lookups with If-None-Match, all 304 (issue 27); 7 is the streamed NDJSON import (issue 14); 8 and 9 are the events scenarios (issue 12), and 8 brings 6 along: its events-off baseline; 11 is the read replica (issue 17); 12 is stock levels (issue 24); 13 is scenarios 1 and 4 with tracing on and off (issue 28); 14 is the stock intake (issue 26); 15 is 1,000 idle Server-Sent Event streams (issue 27); 16 is the relay under 60 s of writes (issue 29); 17 is pruning old events while writers run, and WAL and space per 1,000,000 events and ledger rows (issue 29), on a database of its own; 22 is one 60 MB PUT /v1/location-groups with /index asked every 100 ms (D38); 23 is picks from reservations made beforehand, half into a LoadUnit, half onto a Location, with statements per pick (issue 38)',
  },
  {
    name: 'BENCH_AMQP_URL',
    fallback: DEFAULT_AMQP_URL,
    meaning:
      'the RabbitMQ of scenarios 8, 9, 16 and 17 (each run publishes to an exchange of its own, deleted at the end); not answering: they are skipped',
  },
  {
    name: 'BENCH_KEYED_FIRST',
    fallback: 'unset',
    meaning:
      "`1`: scenario 14 runs the intake with an Idempotency-Key before the one without, for comparing both orders (issue 34); either way the first one's rows are removed before the second, so both start from the same tables",
  },
  {
    name: 'BENCH_CPU_PROF',
    fallback: 'unset',
    meaning:
      '`1`: start the service and the ceiling app with `--cpu-prof` (bench/results/profiles/; summarise with `npx tsx bench/cpu-profile.ts <dir>`)',
  },
];

function positiveInteger(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < minimum) {
    throw new Error(`${name} must be a whole number of at least ${minimum}, not '${raw}'`);
  }
  return value;
}

function keyValues(raw: string | undefined): Record<string, string> {
  const pairs = (raw ?? '').split(',').filter((pair) => pair.trim() !== '');
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_SERVICE_ENV must be NAME=value pairs separated by commas, not '${raw}'`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

function scenarioList(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [...ALL_SCENARIOS];
  const list = raw.split(',').map((item) => Number(item.trim()));
  if (list.some((item) => !ALL_SCENARIOS.includes(item))) {
    throw new Error(
      `BENCH_SCENARIOS must list scenario numbers of ${ALL_SCENARIOS.join(', ')}, e.g. '1,2', not '${raw}'`,
    );
  }
  const withBaselines = list.flatMap((item) => [item, ...(BROUGHT_ALONG[item] ?? [])]);
  return [...new Set(withBaselines)].sort((a, b) => a - b);
}

export function loadBenchConfig(): BenchConfig {
  const sizes = Object.fromEntries(
    (Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).map((key) => [
      key,
      positiveInteger(VARIABLES[key].name, DEFAULTS[key], key === 'warmup' ? 0 : 1),
    ]),
  ) as Record<keyof typeof DEFAULTS, number>;
  // Scenario 5 streams at the seeded size first, then tops the table up; it cannot shrink it.
  const streamProducts = Math.max(sizes.streamProducts, sizes.products);
  const scenarios = scenarioList(process.env.BENCH_SCENARIOS);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('BENCH_DATABASE_URL must be a postgres:// URL');
  }
  const serviceMain = process.env.BENCH_SERVICE_MAIN?.trim() || undefined;
  const serviceEnv = keyValues(process.env.BENCH_SERVICE_ENV);
  const cpuProfile = process.env.BENCH_CPU_PROF === '1' || process.env.BENCH_CPU_PROF === 'true';
  const jwks = process.env.BENCH_JWKS === '1' || process.env.BENCH_JWKS === 'true';
  const keyedFirst = process.env.BENCH_KEYED_FIRST === '1' || process.env.BENCH_KEYED_FIRST === 'true';
  const amqpUrl = process.env.BENCH_AMQP_URL?.trim() || DEFAULT_AMQP_URL;
  if (!/^amqps?:\/\//.test(amqpUrl)) throw new Error('BENCH_AMQP_URL must be an amqp:// or amqps:// URL');
  const issueSizes =
    !cpuProfile &&
    !keyedFirst &&
    !serviceMain &&
    Object.keys(serviceEnv).length === 0 &&
    (Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).every((key) => sizes[key] === DEFAULTS[key]);
  const full = issueSizes && scenarios.length === ALL_SCENARIOS.length;
  return {
    ...sizes,
    streamProducts,
    databaseUrl,
    scenarios,
    cpuProfile,
    jwks,
    keyedFirst,
    serviceMain,
    serviceEnv,
    amqpUrl,
    issueSizes,
    full,
  };
}
