import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import {
  ensureBuilt,
  isRunning,
  postmasterPid,
  processesUsing,
  startService,
  waitForExit,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';

/** The service as an operator runs it: `node dist/main.js`, embedded PostgreSQL, signals. */
const SECRET = 'lifecycle-secret-that-is-long-enough';
const started: ServiceProcess[] = [];
const directories: string[] = [];

async function tempDir(): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-lifecycle-'));
  directories.push(directory);
  return directory;
}

async function start(environment: Record<string, string>): Promise<ServiceProcess> {
  const service = startService({ NODE_ENV: 'development', LOG_LEVEL: 'info', ...environment }, await freePort());
  started.push(service);
  return service;
}

async function startUp(environment: Record<string, string>): Promise<ServiceProcess> {
  const service = await start(environment);
  await waitUntilUp(service);
  return service;
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  expect(await waitForExit(service, 20_000)).toStrictEqual({ code: 0, signal: null });
}

/** A direct connection to the embedded database the service started, found through its log and DATA_DIR. */
async function connectToEmbedded(service: ServiceProcess, dataDir: string): Promise<pg.Client> {
  const line = service.logEntries().find((entry) => entry.msg === 'using the embedded PostgreSQL');
  const port = /127\.0\.0\.1:(\d+)/.exec(String(line?.database))?.[1];
  const password = (await readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
  const client = new pg.Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', password });
  await client.connect();
  return client;
}

function bearer(token: string): RequestInit {
  return { headers: { Authorization: `Bearer ${token}` } };
}

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

function stillRunning(service: ServiceProcess): boolean {
  return service.child.exitCode === null && service.child.signalCode === null;
}

// A failed test must not leave its service holding the DATA_DIR the next test uses.
afterEach(async () => {
  for (const service of started.filter(stillRunning)) {
    service.child.kill('SIGTERM');
    await waitForExit(service, 20_000).catch(() => service.child.kill('SIGKILL'));
  }
}, 30_000);

afterAll(async () => {
  for (const service of started) {
    if (stillRunning(service)) service.child.kill('SIGKILL');
  }
  for (const directory of directories) {
    // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster takes its children with it.
    for (const pid of await processesUsing(directory)) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // already gone
      }
    }
    for (let waited = 0; waited < 10_000 && (await processesUsing(directory)).length > 0; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await rm(directory, { recursive: true, force: true });
  }
}, 30_000);

describe('the service process with AUTH_JWT_SECRET and embedded PostgreSQL', () => {
  let dataDir: string;

  it('starts, serves the index and the API, and on SIGTERM exits 0 leaving no postgres behind', async () => {
    dataDir = await tempDir();
    const service = await startUp({ AUTH_JWT_SECRET: SECRET, DATA_DIR: dataDir });

    const index = await fetch(`${service.baseUrl}/index`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('application/hal+json; charset=utf-8');
    expect(await index.json()).toMatchObject({
      _links: { 'product-index': { href: `${service.baseUrl}/v1/products/index` } },
    });
    const token = jwt.sign({ sub: 'operator' }, SECRET, { algorithm: 'HS256', expiresIn: 60 });
    expect((await fetch(`${service.baseUrl}/v1/products/index`, bearer(token))).status).toBe(200);
    expect((await fetch(`${service.baseUrl}/v1/products/index`)).status).toBe(401);

    const client = await connectToEmbedded(service, dataDir);
    await client.query(`CREATE TABLE lifecycle_marker (note text); INSERT INTO lifecycle_marker VALUES ('kept')`);
    await client.end();
    expect(await processesUsing(dataDir)).toHaveLength(1);

    await stop(service);
    expect(await processesUsing(dataDir)).toStrictEqual([]);
    expect(service.logEntries().map((entry) => entry.msg)).toContain('stopped');
  }, 60_000);

  it('starts again on the same DATA_DIR with its data, applying no migration twice', async () => {
    expect(dataDir).toBeDefined();
    const service = await startUp({ AUTH_JWT_SECRET: SECRET, DATA_DIR: dataDir });
    const messages = service.logEntries().map((entry) => entry.msg);
    expect(messages).not.toContain('initialising a new embedded PostgreSQL cluster');
    expect(messages).not.toContain('migration applied');

    const client = await connectToEmbedded(service, dataDir);
    try {
      expect((await client.query('SELECT note FROM lifecycle_marker')).rows).toStrictEqual([{ note: 'kept' }]);
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0]?.n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
    await stop(service);
    expect(await processesUsing(dataDir)).toStrictEqual([]);
  }, 60_000);
});

describe('the service process refusing to start', () => {
  it('exits 1 with a stderr line naming PORT when PORT=abc', async () => {
    const dataDir = path.join(await tempDir(), 'never-created');
    const service = await start({ AUTH_JWT_SECRET: SECRET, DATA_DIR: dataDir, PORT: 'abc' });
    expect(await waitForExit(service, 15_000)).toStrictEqual({ code: 1, signal: null });
    expect(
      service
        .stderr()
        .split('\n')
        .some((line) => line.includes('PORT')),
    ).toBe(true);
    expect(existsSync(dataDir)).toBe(false);
  }, 20_000);

  it('exits 1 naming the missing key with NODE_ENV=production and no AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY', async () => {
    const dataDir = path.join(await tempDir(), 'never-created');
    const service = await start({ NODE_ENV: 'production', DATA_DIR: dataDir });
    expect(await waitForExit(service, 15_000)).toStrictEqual({ code: 1, signal: null });
    expect(service.stderr()).toContain('AUTH_JWT_SECRET');
    expect(existsSync(dataDir)).toBe(false);
  }, 20_000);

  it('exits 1 naming DATABASE_URL and EMBEDDED_POSTGRES with NODE_ENV=production and no DATABASE_URL', async () => {
    const dataDir = path.join(await tempDir(), 'never-created');
    const service = await start({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET, DATA_DIR: dataDir });
    expect(await waitForExit(service, 15_000)).toStrictEqual({ code: 1, signal: null });
    expect(service.stderr()).toBe(
      'Invalid configuration: DATABASE_URL: is required in production ' +
        '(or EMBEDDED_POSTGRES=true for an embedded PostgreSQL with its data under DATA_DIR)\n',
    );
    expect(service.stdout()).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  }, 20_000);

  it('exits 1 with one line naming both settings, no stack trace, when HTTP_REQUEST_TIMEOUT_MS is below HTTP_HEADERS_TIMEOUT_MS', async () => {
    const dataDir = path.join(await tempDir(), 'never-created');
    const service = await start({ AUTH_JWT_SECRET: SECRET, DATA_DIR: dataDir, HTTP_REQUEST_TIMEOUT_MS: '15000' });
    expect(await waitForExit(service, 15_000)).toStrictEqual({ code: 1, signal: null });
    expect(service.stderr()).toBe(
      'Invalid configuration: HTTP_REQUEST_TIMEOUT_MS: must not be smaller than HTTP_HEADERS_TIMEOUT_MS (20000)\n',
    );
    expect(service.stdout()).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  }, 20_000);
});

describe('the service process in production with EMBEDDED_POSTGRES=true', () => {
  it('starts on the embedded PostgreSQL under DATA_DIR, which was asked for, and exits 0 on SIGTERM', async () => {
    const dataDir = await tempDir();
    const service = await startUp({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: SECRET,
      EMBEDDED_POSTGRES: 'true',
      DATA_DIR: dataDir,
    });
    const line = service.logEntries().find((entry) => entry.msg === 'using the embedded PostgreSQL');
    expect(String(line?.database)).toMatch(/^embedded PostgreSQL on 127\.0\.0\.1:\d+, data in /);
    expect(String(line?.database).endsWith(path.join(dataDir, 'postgres'))).toBe(true);
    await stop(service);
    expect(await processesUsing(dataDir)).toStrictEqual([]);
  }, 60_000);
});

describe('the service process in development without a key', () => {
  let dataDir: string;
  let firstToken: string;

  it('creates a secret under DATA_DIR and logs a ready token that the API accepts', async () => {
    dataDir = await tempDir();
    const service = await startUp({ DATA_DIR: dataDir });
    const line = service.logEntries().find((entry) => String(entry.msg).startsWith('development token'));
    const logged = /export TOKEN=([\w.-]+)$/.exec(String(line?.msg))?.[1];
    expect(logged).toBeDefined();
    firstToken = logged ?? '';

    const secretFile = path.join(dataDir, 'jwt-secret');
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const secret = (await readFile(secretFile, 'utf8')).trim();
    expect(jwt.verify(firstToken, secret, { algorithms: ['HS256'] })).toMatchObject({ sub: 'developer' });
    expect(service.stdout()).not.toContain(secret);

    const response = await fetch(`${service.baseUrl}/v1/products/index`, bearer(firstToken));
    expect(response.status).toBe(200);
    await stop(service);
  }, 60_000);

  it('reclaims the postmaster orphaned by a SIGKILLed service and keeps the secret', async () => {
    expect(dataDir).toBeDefined();
    const killed = await startUp({ DATA_DIR: dataDir });
    const orphan = await postmasterPid(dataDir);
    killed.child.kill('SIGKILL');
    expect(await waitForExit(killed, 10_000)).toStrictEqual({ code: null, signal: 'SIGKILL' });
    expect(orphan !== undefined && isRunning(orphan)).toBe(true);

    const service = await startUp({ DATA_DIR: dataDir });
    expect(isRunning(orphan ?? 0)).toBe(false);
    expect(await postmasterPid(dataDir)).not.toBe(orphan);
    const response = await fetch(`${service.baseUrl}/v1/products/index`, bearer(firstToken));
    expect(response.status).toBe(200);

    await stop(service);
    expect(await processesUsing(dataDir)).toStrictEqual([]);
  }, 60_000);
});
