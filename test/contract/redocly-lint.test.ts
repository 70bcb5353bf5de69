import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../support/contract-document.js';

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

const ROOT = path.dirname(OPENAPI_FILE);

/** `redocly lint` of the committed document with redocly.yaml (the recommended rules), offline. */
async function lint(): Promise<LintReport> {
  const redocly = path.join(ROOT, 'node_modules', '.bin', 'redocly');
  const run = promisify(execFile)(redocly, ['lint', path.basename(OPENAPI_FILE), '--format=json'], {
    cwd: ROOT,
    // Without this, every run reports usage to Redocly over the network (redocly.yaml says `telemetry: off` too).
    env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
    maxBuffer: 64 * 1024 * 1024,
  });
  // redocly exits with 1 when it finds errors; its report is the same.
  const { stdout } = await run.catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? '' }));
  return JSON.parse(stdout) as LintReport;
}

describe('openapi.json under redocly lint', () => {
  it('has no errors and no warnings by the recommended rules', async () => {
    const report = await lint();
    const problems = report.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
    );

    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});
