import { spawn } from 'node:child_process';
import { PROJECT_ROOT } from './service-process.js';

/** How an operator command ended: its exit code and everything it printed. */
export interface CommandOutcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs node (or another program) from the project's root with exactly the given environment (plus PATH and HOME). */
export function runCommand(
  args: readonly string[],
  environment: Record<string, string> = {},
  program = process.execPath,
): Promise<CommandOutcome> {
  const child = spawn(program, args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
