import { TEST_ALLOWED_HOSTS } from '../support/app.js';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { lockWaiter } from '../support/pg-activity.js';
import { freePort } from '../support/ports.js';
import { stopServices } from '../support/service-cluster.js';
import { ensureBuilt, startService, waitUntilUp, type ServiceProcess } from '../support/service-process.js';
import {
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  unique,
  type AllocationElement,
  type CreatedUnit,
} from '../support/stock-api.js';
import { allViolations } from '../support/stock-invariants.js';
import { TEST_SECRET } from '../support/tokens.js';
import {
  describeOutcome,
  eventually,
  is2xx,
  removeTempDir,
  serverDeclinedProblems,
  sleep,
  survival,
  tempDir,
  timedRequest,
  type Outcome,
  type RequestSpec,
} from './harness.js';

/**
 * Issue 7 item 2: PostgreSQL stops under load and starts again. The service runs against a throwaway embedded
 * cluster of this file (DATABASE_URL), which the test stops (fast shutdown) and starts again on the same data
 * folder and port, while light load of writes and reads keeps coming.
 */
const CONNECT_TIMEOUT_MS = 1000;
/** The health probe has a fixed 2 s limit; requests DB_CONNECT_TIMEOUT_MS. Plus a margin for a busy 2-core CI. */
const HANG_LIMIT_MS = 2000 + 4000;
const LOOP_PAUSE_MS = 25;
const MAX_ITERATIONS = 2000;

const logger = pino({ level: 'silent' });
let dataDir: string | undefined;
let databasePort = 0;
let database: EmbeddedPostgres | undefined;
let service: ServiceProcess | undefined;

async function startDatabase(): Promise<EmbeddedPostgres> {
  database = await startEmbeddedPostgres({ dataDir: dataDir!, port: databasePort, logger });
  return database;
}

beforeAll(async () => {
  dataDir = await tempDir('inventory-db-faults-');
  databasePort = await freePort();
  await ensureBuilt();
  const { url } = await startDatabase();
  const environment = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    AUTH_JWT_SECRET: TEST_SECRET,
    ALLOWED_HOSTS: TEST_ALLOWED_HOSTS,
    DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
  };
  service = startService(environment, await freePort());
  await waitUntilUp(service);
}, 120_000);

afterAll(async () => {
  if (service) await stopServices([service]);
  await database?.stop().catch(() => undefined);
  await removeTempDir(dataDir);
}, 60_000);

/** What the 2xx answers said was written: each must be in the database afterwards. */
interface Written {
  skus: Set<string>;
  unitPKeys: Set<string>;
  reservationIds: Set<string>;
}

interface Stock {
  sku: string;
  transportUnitBK: string;
  unitPKey: string;
}

type Kind = 'create product' | 'create units' | 'allocate' | 'read product' | 'read unit';
const KINDS: Kind[] = ['create product', 'create units', 'allocate', 'read product', 'read unit'];

/** One request of the kind, and what to remember when it answers 2xx. */
function requestOf(
  kind: Kind,
  stock: Stock,
  i: number,
): { spec: RequestSpec; remember: (body: unknown, w: Written) => void } {
  const none = (): void => undefined;
  switch (kind) {
    case 'create product': {
      const sku = unique('FAULT');
      return {
        spec: { label: kind, method: 'POST', path: '/v1/products', body: [{ sku, baseUnit: pc(1) }] },
        remember: (_body, w) => w.skus.add(sku),
      };
    }
    case 'create units': {
      const path = `/v1/transport-units/${stock.transportUnitBK}/load-units/${(i % 4) + 1}/packaging-units?loadUnitType=BOX`;
      return {
        spec: { label: kind, method: 'POST', path, body: [{ product: { sku: stock.sku }, quantity: pc(2) }] },
        remember: (body, w) => (body as CreatedUnit[]).forEach((unit) => w.unitPKeys.add(unit.pKey)),
      };
    }
    case 'allocate':
      return {
        spec: {
          label: kind,
          method: 'POST',
          path: '/allocation/transport-units',
          body: { sku: stock.sku, qty: pc(1) },
        },
        remember: (body, w) => (body as AllocationElement[]).forEach((e) => w.reservationIds.add(e.reservationId)),
      };
    case 'read product':
      return { spec: { label: kind, method: 'GET', path: `/v1/products?sku=${stock.sku}` }, remember: none };
    case 'read unit':
      return { spec: { label: kind, method: 'GET', path: `/v1/packaging-units/${stock.unitPKey}` }, remember: none };
  }
}

async function perform(kind: Kind, stock: Stock, i: number, written: Written): Promise<Outcome> {
  const { spec, remember } = requestOf(kind, stock, i);
  const outcome = await timedRequest(service!.baseUrl, spec, HANG_LIMIT_MS + 5000);
  if (is2xx(outcome)) remember(outcome.body, written);
  return outcome;
}

async function health(): Promise<Outcome> {
  return timedRequest(service!.baseUrl, { label: 'health', method: 'GET', path: '/actuator/health' }, HANG_LIMIT_MS);
}

/** One loop per kind of request, one request at a time with a short pause, until stopped. */
function startLoad(stock: Stock, written: Written): { outcomes: Outcome[]; stop(): Promise<void> } {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = KINDS.map(async (kind) => {
    for (let i = 0; i < MAX_ITERATIONS && running; i++) {
      outcomes.push(await perform(kind, stock, i, written));
      await sleep(LOOP_PAUSE_MS);
    }
  });
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * Makes sure a transaction is in the middle of a statement when PostgreSQL stops: the test locks the seeded unit,
 * so the next allocation waits for it. Answers the connection, which the stop ends.
 */
async function holdUnitUntilAllocationWaits(unitPKey: string): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: database!.url });
  holder.on('error', () => undefined);
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT id FROM packaging_unit WHERE p_key = $1 FOR UPDATE', [unitPKey]);
  const observer = new pg.Pool({ connectionString: database!.url, max: 1 });
  observer.on('error', () => undefined);
  try {
    await lockWaiter(observer, 'packaging_unit');
  } finally {
    await observer.end();
  }
  return holder;
}

describe('PostgreSQL stopped and started again under load', () => {
  it('fails fast with 503 while it is down, recovers without a restart, and loses no 2xx write', async () => {
    const api = service!.baseUrl;
    const pid = service!.child.pid;
    const sku = await givenProduct(api);
    const transportUnitBK = await givenTransportUnitOn(api, (await givenLocation(api)).locationId);
    const [seed] = await givenUnitsIn(api, transportUnitBK, '1', sku, [{ quantity: pc(500) }]);
    const stock: Stock = { sku, transportUnitBK, unitPKey: seed!.pKey };
    const written: Written = { skus: new Set(), unitPKeys: new Set([seed!.pKey]), reservationIds: new Set() };
    const load = startLoad(stock, written);
    const { outcomes } = load;
    try {
      await sleep(1500);
      expect(outcomes.filter((o) => !is2xx(o)).map(describeOutcome)).toEqual([]);

      const holder = await holdUnitUntilAllocationWaits(stock.unitPKey);
      await database!.stop();
      const downFrom = Date.now();
      await holder.end().catch(() => undefined);
      await sleep(1500);
      expect(survival(service!)).toEqual({ exitCode: null, signal: null, fatal: [] });
      const down = await health();
      expect([down.status, down.body]).toEqual([503, { status: 'DOWN' }]);
      expect(down.ms).toBeLessThan(HANG_LIMIT_MS);
      await sleep(1500);
      const downUntil = Date.now();

      await startDatabase();
      await eventually('health UP after PostgreSQL started again', async () => (await health()).status === 200, 30_000);
      const recoveredAt = Date.now();
      await sleep(1500);
      await load.stop();

      const whileDown = outcomes.filter((o) => o.startedAt >= downFrom && o.startedAt + o.ms <= downUntil);
      // Every kind of request was tried while the database was down, and each was a well-formed 503.
      expect(new Set(whileDown.map((o) => o.label))).toEqual(new Set(KINDS));
      expect(whileDown.flatMap((o) => serverDeclinedProblems(o, 503))).toEqual([]);
      // Nothing but a 2xx or such a 503 at any time, requests in flight at the stop and during the restart included.
      expect(outcomes.filter((o) => !is2xx(o)).flatMap((o) => serverDeclinedProblems(o, 503))).toEqual([]);
      expect(outcomes.filter((o) => o.ms >= HANG_LIMIT_MS).map(describeOutcome)).toEqual([]);
      // Recovered on its own: the same process, and every request after health said UP succeeded.
      expect(service!.child.pid).toBe(pid);
      expect(survival(service!)).toEqual({ exitCode: null, signal: null, fatal: [] });
      const afterRecovery = outcomes.filter((o) => o.startedAt >= recoveredAt);
      expect(new Set(afterRecovery.map((o) => o.label))).toEqual(new Set(KINDS));
      expect(afterRecovery.filter((o) => !is2xx(o)).map(describeOutcome)).toEqual([]);
    } finally {
      await load.stop();
    }

    const fresh = await Promise.all(KINDS.map((kind, i) => perform(kind, stock, i, written)));
    expect(fresh.filter((o) => !is2xx(o)).map(describeOutcome)).toEqual([]);
    await expectAllWritten(written);
  }, 90_000);
});

/** Every SKU, unit and reservation a 2xx answer reported is in the database; the stock invariants hold. */
async function expectAllWritten(written: Written): Promise<void> {
  const pool = new pg.Pool({ connectionString: database!.url, max: 2 });
  try {
    const skus = [...written.skus];
    const units = [...written.unitPKeys];
    const reservations = [...written.reservationIds];
    expect(skus.length).toBeGreaterThan(0);
    expect(units.length).toBeGreaterThan(1);
    expect(reservations.length).toBeGreaterThan(0);
    const found = async (sql: string, keys: string[]): Promise<string[]> =>
      (await pool.query<{ key: string }>(sql, [keys])).rows.map((row) => row.key);
    const storedSkus = await found('SELECT sku AS key FROM product WHERE sku = ANY($1::text[])', skus);
    const storedUnits = await found(
      'SELECT p_key::text AS key FROM packaging_unit WHERE p_key = ANY($1::uuid[])',
      units,
    );
    const storedReservations = await found(
      'SELECT DISTINCT reservation_id::text AS key FROM reservation WHERE reservation_id = ANY($1::uuid[])',
      reservations,
    );
    expect(skus.filter((key) => !storedSkus.includes(key))).toEqual([]);
    expect(units.filter((key) => !storedUnits.includes(key))).toEqual([]);
    expect(reservations.filter((key) => !storedReservations.includes(key))).toEqual([]);
    expect(await allViolations(pool)).toEqual([]);
  } finally {
    await pool.end();
  }
}
