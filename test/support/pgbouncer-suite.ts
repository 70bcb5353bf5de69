import { pgbouncerBinary } from './pgbouncer.js';
import { describeWith } from './required-suite.js';

/** `describe` when pgbouncer is installed; skipped with a notice, or failed with REQUIRE_PGBOUNCER=1 (CI). */
export function describeWithPgBouncer(name: string, suite: () => void): void {
  const missing = pgbouncerBinary ? undefined : 'no pgbouncer installed (apt-get install -y pgbouncer)';
  describeWith({ kind: 'PGBOUNCER', requireVariable: 'REQUIRE_PGBOUNCER', missing }, name, suite);
}
