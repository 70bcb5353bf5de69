import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { afterAll, beforeAll } from 'vitest';
import { ensureBuilt, PROJECT_ROOT } from './service-process.js';

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
  return startCommand(args, environment, program).outcome;
}

/** runCommand, interrupted with SIGINT (Ctrl-C) once `interrupt` resolves. */
export async function runCommandInterrupted(
  args: readonly string[],
  environment: Record<string, string>,
  interrupt: () => Promise<unknown>,
): Promise<CommandOutcome> {
  const { child, outcome } = startCommand(args, environment, process.execPath);
  await interrupt();
  child.kill('SIGINT');
  return outcome;
}

function startCommand(
  args: readonly string[],
  environment: Record<string, string>,
  program: string,
): { child: ChildProcess; outcome: Promise<CommandOutcome> } {
  const child = spawn(program, args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const outcome = new Promise<CommandOutcome>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, outcome };
}

/** What the import command's tests share: the test's app on a real port and a directory for the files it reads. */
export interface ImportCommandSetup {
  /** The app's base URL. */
  readonly url: string;
  /** Writes `text` to a file of that name in the directory; answers its path. */
  givenFile(name: string, text: string): Promise<string>;
}

/**
 * Serves the test file's app over HTTP for `npm run import` as the image runs it (compiled JS under dist/, plain
 * node), and gives it a directory of files; the fields are ready once the file's beforeAll hooks have run.
 */
export function useImportCommand(app: () => Express): ImportCommandSetup {
  let server: http.Server;
  let workDir: string;
  const setup = {
    url: '',
    givenFile: async (name: string, text: string): Promise<string> => {
      const file = path.join(workDir, name);
      await writeFile(file, text);
      return file;
    },
  };
  beforeAll(async () => {
    await ensureBuilt();
    server = http.createServer(app());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    setup.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    workDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-import-'));
  }, 180_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(workDir, { recursive: true, force: true });
  });
  return setup;
}
