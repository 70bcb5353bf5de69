import { describe } from 'vitest';

/** A real part some tests need (a broker, a pooler, PostgreSQL's tools), and why it is missing here, if it is. */
export interface RequiredPart {
  /** Upper case, for the notice: `BROKER`, `PGBOUNCER`, `READ-REPLICA`. */
  readonly kind: string;
  /** The variable CI sets to 1 so that a missing part fails instead of skipping, e.g. `REQUIRE_BROKER`. */
  readonly requireVariable: string;
  /** Why the part cannot be used here; undefined when it can. */
  readonly missing: string | undefined;
}

/**
 * `describe` when the part is there. Without it the suite is skipped with a notice on stderr that nobody can miss, or,
 * with `requireVariable`=1 (CI), the file fails: a test of a real part that silently did not run proves nothing.
 */
export function describeWith(part: RequiredPart, name: string, suite: () => void): void {
  if (part.missing === undefined) {
    describe(name, suite);
    return;
  }
  if (process.env[part.requireVariable] === '1') {
    throw new Error(`${part.requireVariable}=1 but ${part.missing}: ${name} cannot run`);
  }
  const line = `SKIPPED ${part.kind} TESTS: ${name} — ${part.missing}`;
  const rule = '═'.repeat(line.length + 2);
  process.stderr.write(`\n╔${rule}╗\n║ ${line} ║\n╚${rule}╝\n`);
  describe.skip(name, suite);
}
