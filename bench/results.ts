import type { BenchConfig } from './config.js';
import type { CpuShare } from './cpu-share.js';
import type { BenchDatabase } from './database.js';
import type { LoadResult } from './load.js';
import type { PgbenchDatabase } from './pgbench.js';
import type { RunningServer } from './service.js';

/** What the scenarios share: sizes, the database, the two servers under test and a valid token. */
export interface BenchContext {
  readonly config: BenchConfig;
  readonly db: BenchDatabase;
  readonly service: RunningServer;
  readonly ceiling: RunningServer;
  readonly authorization: string;
  /** pgbench's database, initialised while seeding when scenario 4 runs. */
  readonly pgbench: PgbenchDatabase | undefined;
}

export interface Measurement {
  /** Who was measured: the service, or the ceiling and how it was built. */
  readonly label: string;
  readonly throughput: number;
  readonly unit: string;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly peakRssMb?: number;
  /** Where the CPU went while this was measured (percent of one core). */
  readonly cpu?: CpuShare;
}

/** A load run as a table row: its latencies, memory and CPU, at its own or a given throughput and unit. */
export function measurementOf(
  label: string,
  run: LoadResult,
  unit = 'req/s',
  throughput = run.requestsPerSecond,
): Measurement {
  return { label, throughput, unit, p50Ms: run.p50Ms, p99Ms: run.p99Ms, peakRssMb: run.peakRssMb, cpu: run.cpu };
}

export interface TargetCheck {
  readonly target: string;
  readonly actual: string;
  readonly met: boolean;
}

export interface ScenarioResult {
  readonly id: number;
  readonly title: string;
  readonly service: Measurement;
  readonly ceiling?: Measurement;
  /** service ÷ ceiling, on the metric the scenario names (see `ratioBasis`). */
  readonly ratio?: number;
  readonly ratioBasis?: string;
  readonly targets: readonly TargetCheck[];
  /** Further measurements of the scenario (e.g. scenario 5 at its second size). */
  readonly extra?: readonly Measurement[];
  /** Status counts, invariant checks and the like, for results.json and the details section. */
  readonly details: Record<string, unknown>;
  readonly notes: readonly string[];
}

export function ratioOf(service: number, ceiling: number): number | undefined {
  return ceiling > 0 ? service / ceiling : undefined;
}

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
