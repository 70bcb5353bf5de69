import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, copyFile, mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aQuantity, uniqueSku } from '../support/builders.js';
import { freePort } from '../support/ports.js';
import { ensureBuilt, isRunning, MAIN_JS, postmasterPid, PROJECT_ROOT } from '../support/service-process.js';
import { bearer, TEST_SECRET } from '../support/tokens.js';

/**
 * Issue 28 / D36: `npm start` ran tsc on every start, and Ctrl-C (SIGINT to the terminal's whole process group)
 * reached the embedded PostgreSQL first while npm passed the same SIGINT on once more, so the service exited on a
 * "second signal" with its database already gone. Now it starts what is built, building only when a source is
 * newer, and Ctrl-C shuts down as SIGTERM does: requests in flight finish, the embedded PostgreSQL stops last.
 */
let workDir: string;

beforeAll(async () => {
  await ensureBuilt();
  workDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-npm-start-'));
  // The embedded PostgreSQL runs as the postgres user when the tests run as root: it must reach DATA_DIR.
  await chmod(workDir, 0o711);
}, 180_000);

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('scripts/build-when-stale.sh (what npm start runs first)', () => {
  /** A checkout in miniature whose build only leaves a mark, so the test builds nothing for real. */
  async function miniatureCheckout(): Promise<string> {
    const root = await mkdtemp(path.join(workDir, 'checkout-'));
    await mkdir(path.join(root, 'scripts'));
    await mkdir(path.join(root, 'src'));
    await mkdir(path.join(root, 'dist'));
    await copyFile(
      path.join(PROJECT_ROOT, 'scripts', 'build-when-stale.sh'),
      path.join(root, 'scripts', 'build-when-stale.sh'),
    );
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ scripts: { build: 'touch dist/built-now' } }));
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'src/main.ts', 'dist/main.js']) {
      await writeFile(path.join(root, file), '');
    }
    // Sources two minutes old, the build one minute old.
    for (const file of ['src', 'tsconfig.json', 'tsconfig.build.json', 'src/main.ts', 'dist/main.js']) {
      const time = new Date(Date.now() - (file.startsWith('dist') ? 60_000 : 120_000));
      await utimes(path.join(root, file), time, time);
    }
    return root;
  }

  const run = async (root: string): Promise<boolean> => {
    await promisify(execFile)('sh', [path.join(root, 'scripts', 'build-when-stale.sh')], { cwd: root });
    return stat(path.join(root, 'dist', 'built-now')).then(
      () => true,
      () => false,
    );
  };

  it('builds nothing when dist/main.js is newer than every source', async () => {
    expect(await run(await miniatureCheckout())).toBe(false);
  });

  it('builds when a source is newer than dist/main.js', async () => {
    const root = await miniatureCheckout();
    await writeFile(path.join(root, 'src', 'main.ts'), 'changed');
    expect(await run(root)).toBe(true);
  });
});

describe('npm start, stopped with Ctrl-C', () => {
  it('starts the built service without building, and on SIGINT to its process group finishes a request in flight, then stops the embedded PostgreSQL and exits 0', async () => {
    const dataDir = path.join(workDir, 'data');
    const port = await freePort();
    const builtAt = (await stat(MAIN_JS)).mtimeMs;
    // detached: its own process group, as a terminal gives the command it runs in the foreground.
    const npm = spawn('npm', ['start'], {
      cwd: PROJECT_ROOT,
      detached: true,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        PORT: String(port),
        DATA_DIR: dataDir,
        AUTH_JWT_SECRET: TEST_SECRET,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = once(npm, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    const logLines = (): Record<string, unknown>[] =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const waitForLog = async (message: string, ms: number): Promise<void> => {
      for (const deadline = Date.now() + ms; !logLines().some((line) => line.msg === message);) {
        if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`no '${message}' in:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      await waitForLog('inventory service ready', 120_000);
      expect((await stat(MAIN_JS)).mtimeMs).toBe(builtAt);
      expect(output).not.toContain('tsc -p tsconfig.build.json');
      const postmaster = await postmasterPid(dataDir);
      expect(postmaster).toBeDefined();

      // A create whose body is still arriving when Ctrl-C is pressed.
      const sku = uniqueSku('CTRL-C');
      const body = JSON.stringify([{ sku, baseUnit: aQuantity(1) }]);
      const create = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/products',
        headers: {
          Authorization: bearer(),
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      });
      const answered = once(create, 'response') as Promise<[http.IncomingMessage]>;
      create.write(body.slice(0, 10));
      await new Promise((resolve) => setTimeout(resolve, 300));

      process.kill(-npm.pid!, 'SIGINT');
      await waitForLog('shutting down: no new connections, finishing in-flight requests', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(isRunning(postmaster!)).toBe(true);
      create.end(body.slice(10));
      const [response] = await answered;
      response.resume();
      expect(response.statusCode).toBe(201);

      const [code] = await exited;
      expect(code, output).toBe(0);
      expect(isRunning(postmaster!)).toBe(false);
      const messages = logLines().map((line) => line.msg);
      expect(messages).not.toContain('second signal: exiting immediately');
      const shutdownStart = messages.indexOf('shutting down: no new connections, finishing in-flight requests');
      // Nothing in between: no connection of the pool lost to a database that stopped first.
      expect(messages.slice(shutdownStart)).toEqual([
        'shutting down: no new connections, finishing in-flight requests',
        expect.stringMatching(/^POST \/v1\/products 201 /),
        'connections closed: stopping the background work',
        'background work stopped: closing the database',
        'stopped',
      ]);
      expect(logLines().filter((line) => (line.level as number) >= 50)).toEqual([]);
    } finally {
      if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
    }
  }, 240_000);
});
