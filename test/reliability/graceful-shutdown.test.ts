import http from 'node:http';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { freePort } from '../support/ports.js';
import { stopServices } from '../support/service-cluster.js';
import {
  ensureBuilt,
  processesUsing,
  startService,
  waitForExit,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';
import { pc } from '../support/stock-api.js';
import { bearer, TEST_SECRET } from '../support/tokens.js';
import { connectionAttempt, eventually, removeTempDir, tempDir } from './harness.js';

/**
 * Issue 7 item 3: SIGTERM while 50 connections are busy. Each connection carries a bulk create of a few thousand
 * Products sent with `Expect: 100-continue`: the service answers `100 Continue` only once it has accepted the
 * connection and read the request head, and the request cannot finish before the test sends its body. So all 50 are
 * certainly in flight when the signal arrives, with no timing guesswork; their bodies go out after the signal.
 */
const CONNECTIONS = 50;
const PRODUCTS_PER_REQUEST = 2000;

let dataDir: string | undefined;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = await tempDir('inventory-shutdown-');
  await ensureBuilt();
  const environment = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    AUTH_JWT_SECRET: TEST_SECRET,
    EMBEDDED_POSTGRES: 'true',
    DATA_DIR: dataDir,
    // One connection per busy request, so none waits for the pool; a deadline far beyond the work, so the proof
    // is that the requests finish, not that the deadline cuts them.
    DB_POOL_MAX: String(CONNECTIONS),
    // Fifty connections opened at once on a loaded machine may take more than the default 5 s.
    DB_CONNECT_TIMEOUT_MS: '30000',
    SHUTDOWN_TIMEOUT_MS: '60000',
  };
  service = startService(environment, await freePort());
  await waitUntilUp(service, 60_000);
}, 120_000);

afterAll(async () => {
  if (service) await stopServices([service]);
  await removeTempDir(dataDir);
}, 60_000);

interface HeldOutcome {
  status?: number;
  error?: string;
  body: string;
  /** The answer's Connection header. */
  connection?: string;
}

interface HeldRequest {
  /** Resolves when the service answered `100 Continue`: it has accepted the connection and read the head. */
  readonly accepted: Promise<void>;
  sendBody(): void;
  readonly outcome: Promise<HeldOutcome>;
  /** Whether the request went out on a connection kept from an earlier request. */
  reused(): boolean;
}

/** A bulk create sent with `Expect: 100-continue`, on its own connection (agent false) or the agent's. */
function heldCreate(port: number, skus: readonly string[], agent: http.Agent | false): HeldRequest {
  const payload = Buffer.from(JSON.stringify(skus.map((sku) => ({ sku, baseUnit: pc(1) }))));
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/products',
    agent,
    headers: {
      Authorization: bearer(),
      'Content-Type': 'application/json',
      'Content-Length': payload.length,
      Expect: '100-continue',
    },
  });
  const accepted = new Promise<void>((resolve) => request.once('continue', () => resolve()));
  const outcome = new Promise<HeldOutcome>((resolve) => {
    request.on('response', (response) => {
      let body = '';
      const connection = response.headers.connection;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, body, connection }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, body }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, body: '' }));
  });
  request.flushHeaders();
  return { accepted, sendBody: () => request.end(payload), outcome, reused: () => request.reusedSocket };
}

const logged = (message: string): boolean => service!.logEntries().some((entry) => entry.msg === message);

/** Opens the stopped service's data folder with its own embedded PostgreSQL and counts what was committed. */
async function committedProducts(): Promise<number> {
  const database = await startEmbeddedPostgres({ dataDir: dataDir!, port: 0, logger: pino({ level: 'silent' }) });
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM product WHERE sku LIKE 'SHUTDOWN-%'",
      );
      return rows[0]!.n;
    } finally {
      await client.end();
    }
  } finally {
    await database.stop();
  }
}

describe('SIGTERM while 50 connections are busy', () => {
  it('finishes every request in flight, refuses new connections, exits 0 and leaves no postgres behind', async () => {
    const { port } = service!;
    const held = Array.from({ length: CONNECTIONS }, (_, i) =>
      heldCreate(
        port,
        Array.from({ length: PRODUCTS_PER_REQUEST }, (_, j) => `SHUTDOWN-${i}-${j}`),
        false,
      ),
    );
    await Promise.all(held.map((request) => request.accepted));
    expect(await processesUsing(dataDir!)).not.toEqual([]);

    service!.child.kill('SIGTERM');
    await eventually(
      'the shutdown to begin',
      () => logged('shutting down: no new connections, finishing in-flight requests'),
      10_000,
    );
    expect(await connectionAttempt(port)).toBe('ECONNREFUSED');

    for (const request of held) request.sendBody();
    // Still refused while the accepted requests are being worked on.
    expect(await connectionAttempt(port)).toBe('ECONNREFUSED');
    const outcomes = await Promise.all(held.map((request) => request.outcome));

    expect(outcomes).toEqual(Array(CONNECTIONS).fill({ status: 201, body: '', connection: 'close' }));
    // What is left after the 201s, numbering 100,000 new events and the embedded server's shutdown checkpoint, runs
    // on a machine and a disk the rest of CI shares; the log says which step a slow stop was in.
    expect(await waitForExit(service!, 120_000)).toEqual({ code: 0, signal: null });
    expect(logged('stopped')).toBe(true);
    expect(logged('shutdown deadline reached: closing the remaining connections')).toBe(false);
    expect(await processesUsing(dataDir!)).toEqual([]);
    // What the 201s promised was committed: the data folder holds every Product.
    expect(await committedProducts()).toBe(CONNECTIONS * PRODUCTS_PER_REQUEST);
  }, 200_000);
});

function getOn(port: number, agent: http.Agent): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get(
        { host: '127.0.0.1', port, path: '/v1/products/index', agent, headers: { Authorization: bearer() } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      )
      .on('error', reject);
  });
}

describe('SIGTERM while clients keep their connections open (keep-alive)', () => {
  it('answers the requests in flight with Connection: close and exits without waiting for the connections', async () => {
    const drainDir = await tempDir('inventory-drain-');
    const connections = 10;
    const agents = Array.from({ length: connections }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    // Idle connections would be kept for a minute: only closing them after their answer lets the service go.
    const drained = startService(
      {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        AUTH_JWT_SECRET: TEST_SECRET,
        EMBEDDED_POSTGRES: 'true',
        DATA_DIR: drainDir,
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '60000',
        SHUTDOWN_TIMEOUT_MS: '60000',
      },
      await freePort(),
    );
    try {
      await waitUntilUp(drained, 60_000);
      expect(await Promise.all(agents.map((agent) => getOn(drained.port, agent)))).toEqual(
        Array(connections).fill(200),
      );
      const held = agents.map((agent, i) => heldCreate(drained.port, [`DRAIN-${i}`], agent));
      await Promise.all(held.map((request) => request.accepted));
      expect(held.map((request) => request.reused())).toEqual(Array(connections).fill(true));

      drained.child.kill('SIGTERM');
      await eventually(
        'the shutdown to begin',
        () =>
          drained
            .logEntries()
            .some((entry) => entry.msg === 'shutting down: no new connections, finishing in-flight requests'),
        10_000,
      );
      for (const request of held) request.sendBody();
      const outcomes = await Promise.all(held.map((request) => request.outcome));

      expect(outcomes).toEqual(Array(connections).fill({ status: 201, body: '', connection: 'close' }));
      expect(await waitForExit(drained, 15_000)).toEqual({ code: 0, signal: null });
      expect(
        drained
          .logEntries()
          .some((entry) => entry.msg === 'shutdown deadline reached: closing the remaining connections'),
      ).toBe(false);
    } finally {
      for (const agent of agents) agent.destroy();
      await stopServices([drained]);
      await removeTempDir(drainDir);
    }
  }, 120_000);
});
