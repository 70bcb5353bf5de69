import { describe } from 'vitest';
import { pgbouncerBinary } from './pgbouncer.js';

function skippedNotice(name: string): string {
  const line = `SKIPPED PGBOUNCER TESTS: ${name} — no pgbouncer installed (apt-get install -y pgbouncer)`;
  const rule = '═'.repeat(line.length + 2);
  return `\n╔${rule}╗\n║ ${line} ║\n╚${rule}╝\n`;
}

/**
 * `describe` when pgbouncer is installed. Without it the suite is skipped with a notice on stderr, or, with
 * REQUIRE_PGBOUNCER=1 (CI), the file fails: a pooler test that silently did not run proves nothing.
 */
export function describeWithPgBouncer(name: string, suite: () => void): void {
  if (pgbouncerBinary) {
    describe(name, suite);
    return;
  }
  if (process.env.REQUIRE_PGBOUNCER === '1') {
    throw new Error(`REQUIRE_PGBOUNCER=1 but pgbouncer is not installed: ${name} cannot run`);
  }
  process.stderr.write(skippedNotice(name));
  describe.skip(name, suite);
}
