import { pick } from './load.js';
import { compareReads } from './read-comparison.js';
import type { BenchContext, ScenarioResult } from './results.js';
import { sampleUnitKeys } from './seed.js';

export const UNIT_SAMPLE = 20_000;

/** Scenario 2: GET /v1/packaging-units/{pKey} on the seeded PackagingUnits. */
export async function unitByPKey(bench: BenchContext, tuPrefix: string): Promise<ScenarioResult> {
  const keys = await sampleUnitKeys(bench.db.pool, tuPrefix, UNIT_SAMPLE);
  return compareReads({
    bench,
    id: 2,
    title: `GET /v1/packaging-units/{pKey} on ${bench.config.units.toLocaleString('en-US')} units`,
    next: () => {
      const key = pick(keys);
      return { service: { path: `/v1/packaging-units/${key}` }, ceiling: { path: `/packaging-units/${key}` } };
    },
  });
}
