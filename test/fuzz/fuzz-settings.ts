import fc from 'fast-check';

/**
 * Seeded and bounded: `FUZZ_SEED` (default fixed, `random` for a fresh one), `FUZZ_RUNS` runs per property
 * (`npm test` keeps the default small; `npm run fuzz` raises it), `FUZZ_PATH` replays one counterexample.
 */
const DEFAULT_SEED = 20_260_711;
const DEFAULT_RUNS = 100;

function seedFromEnvironment(): number {
  const text = process.env.FUZZ_SEED;
  if (text === undefined || text === '') return DEFAULT_SEED;
  if (text === 'random') return Date.now() % 2_147_483_647;
  const seed = Number(text);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer or "random", got ${text}`);
  return seed;
}

export const FUZZ_SEED = seedFromEnvironment();
export const FUZZ_RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? DEFAULT_RUNS) || DEFAULT_RUNS);
const FUZZ_PATH = process.env.FUZZ_PATH;

/** Generous per-test timeout: requests with 100 kB strings or 10 000-item arrays take tens of milliseconds. */
export function fuzzTimeout(runs = FUZZ_RUNS): number {
  return 60_000 + runs * 250;
}

const SHRINK_BUDGET = 150;

/**
 * Runs an async property with the run's seed. Shrinking a stateful failure replays requests against a changed
 * database, so it gets a budget of real attempts; later candidates are skipped. On failure the error names the
 * seed, the path and the command that replays exactly that counterexample, then the shrunk request and response.
 */
export async function checkProperty<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<unknown>,
  runs = FUZZ_RUNS,
  testFile = 'test/fuzz',
): Promise<void> {
  let attemptsAfterFailure: number | undefined;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    if (attemptsAfterFailure !== undefined) {
      attemptsAfterFailure += 1;
      fc.pre(attemptsAfterFailure <= SHRINK_BUDGET);
    }
    try {
      await predicate(value);
    } catch (error) {
      attemptsAfterFailure ??= 0;
      throw error;
    }
  });
  const parameters: fc.Parameters<[T]> = { seed: FUZZ_SEED, numRuns: runs };
  if (FUZZ_PATH) parameters.path = FUZZ_PATH;
  const details = await fc.check(property, parameters);
  if (!details.failed) return;
  const replay =
    `FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${runs}` +
    (details.counterexamplePath ? ` FUZZ_PATH=${details.counterexamplePath}` : '') +
    ` npx vitest run ${testFile} -t '${name.replaceAll("'", '')}'`;
  const summary = `fuzz property "${name}" failed (seed ${FUZZ_SEED}, path ${details.counterexamplePath}); replay: ${replay}`;
  process.stderr.write(`${summary}\n`);
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`${summary}\n${fc.defaultReportMessage(details) ?? ''}\n--- failure of the shrunk case\n${cause}`);
}
