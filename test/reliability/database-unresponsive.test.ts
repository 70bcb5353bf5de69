import { TEST_ALLOWED_HOSTS } from '../support/app.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { freePort } from '../support/ports.js';
import { stopServices } from '../support/service-cluster.js';
import { ensureBuilt, startService, waitUntilUp, type ServiceProcess } from '../support/service-process.js';
import { givenProduct, pc, unique } from '../support/stock-api.js';
import { TEST_SECRET } from '../support/tokens.js';
import {
  clusterProcesses,
  describeOutcome,
  eventually,
  is2xx,
  removeTempDir,
  serverDeclinedProblems,
  signalAll,
  survival,
  tempDir,
  timedRequest,
  type Outcome,
  type RequestSpec,
} from './harness.js';

/**
 * Issue 7 item 2, "no hang longer than a configured timeout", for the harder half of database faults: a PostgreSQL
 * that is there but does not answer (frozen with SIGSTOP, as a hung host or a network partition that drops packets
 * looks to the service). A refused connection fails at once; an open connection whose server never answers must
 * still end within the configured statement timeout, as a 503, since the server cannot enforce it any more.
 */
const CONNECT_TIMEOUT_MS = 1000;
const STATEMENT_TIMEOUT_MS = 3000;
/** The longest configured wait plus a margin generous enough for a busy 2-core CI machine. */
const HANG_LIMIT_MS = STATEMENT_TIMEOUT_MS + 4000;

let dataDir: string | undefined;
let database: EmbeddedPostgres | undefined;
let service: ServiceProcess | undefined;
let frozen: number[] = [];

beforeAll(async () => {
  dataDir = await tempDir('inventory-db-frozen-');
  await ensureBuilt();
  database = await startEmbeddedPostgres({ dataDir, port: 0, logger: pino({ level: 'silent' }) });
  const environment = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url,
    AUTH_JWT_SECRET: TEST_SECRET,
    ALLOWED_HOSTS: TEST_ALLOWED_HOSTS,
    DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
  };
  service = startService(environment, await freePort());
  await waitUntilUp(service);
}, 120_000);

afterAll(async () => {
  signalAll(frozen, 'SIGCONT');
  if (service) await stopServices([service]);
  await database?.stop().catch(() => undefined);
  await removeTempDir(dataDir);
}, 60_000);

function send(spec: RequestSpec): Promise<Outcome> {
  return timedRequest(service!.baseUrl, spec, HANG_LIMIT_MS + 5000);
}

const readProduct = (sku: string): RequestSpec => ({
  label: 'read product',
  method: 'GET',
  path: `/v1/products?sku=${sku}`,
});
const createProduct = (): RequestSpec => ({
  label: 'create product',
  method: 'POST',
  path: '/v1/products',
  body: [{ sku: unique('FROZEN'), baseUnit: pc(1) }],
});
const health: RequestSpec = { label: 'health', method: 'GET', path: '/actuator/health' };

describe('a PostgreSQL that stops answering', () => {
  it('gets 503s within the configured timeouts, health DOWN, and recovery when it answers again', async () => {
    const sku = await givenProduct(service!.baseUrl);
    // Fill the pool with open connections: those are the ones a frozen server leaves hanging.
    const warm = await Promise.all(Array.from({ length: 10 }, () => send(readProduct(sku))));
    expect(warm.filter((o) => !is2xx(o)).map(describeOutcome)).toEqual([]);

    frozen = await clusterProcesses(dataDir!);
    expect(frozen.length).toBeGreaterThan(1);
    let outcomes: Outcome[];
    let down: Outcome;
    signalAll(frozen, 'SIGSTOP');
    try {
      [down, ...outcomes] = await Promise.all([
        send(health),
        ...Array.from({ length: 12 }, () => send(readProduct(sku))),
        ...Array.from({ length: 3 }, () => send(createProduct())),
      ]);
    } finally {
      signalAll(frozen, 'SIGCONT');
      frozen = [];
    }

    expect([down.status, down.body]).toEqual([503, { status: 'DOWN' }]);
    expect([down, ...outcomes].filter((o) => o.ms >= HANG_LIMIT_MS).map(describeOutcome)).toEqual([]);
    expect(outcomes.flatMap((o) => serverDeclinedProblems(o, 503))).toEqual([]);

    await eventually('health UP once PostgreSQL answers again', async () => is2xx(await send(health)), 30_000);
    const after = await Promise.all([send(readProduct(sku)), send(createProduct())]);
    expect(after.filter((o) => !is2xx(o)).map(describeOutcome)).toEqual([]);
    expect(survival(service!)).toEqual({ exitCode: null, signal: null, fatal: [] });
  }, 60_000);
});
