import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeWith } from './required-suite.js';

/** Prometheus's own checker (Debian package `prometheus`), or undefined where it is not installed. */
export const promtoolBinary = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((file) => existsSync(file));

/** How promtool ended: its exit code and everything it printed. */
export interface PromtoolOutcome {
  readonly code: number;
  readonly output: string;
}

/** Runs promtool with the arguments, `stdin` (if any) on its standard input. */
export function promtool(args: readonly string[], stdin?: string): Promise<PromtoolOutcome> {
  return new Promise((resolve) => {
    const child = execFile(promtoolBinary!, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
    child.stdin!.end(stdin ?? '');
  });
}

/** `describe` when promtool is installed; skipped with a notice, or failed with REQUIRE_PROMTOOL=1 (CI). */
export function describeWithPromtool(name: string, suite: () => void): void {
  const missing = promtoolBinary ? undefined : 'no promtool installed (apt-get install -y prometheus)';
  describeWith({ kind: 'PROMTOOL', requireVariable: 'REQUIRE_PROMTOOL', missing }, name, suite);
}
