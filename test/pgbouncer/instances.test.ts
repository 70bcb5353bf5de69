import type { Express } from 'express';
import { pino } from 'pino';
import type { Response } from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { describeWithPgBouncer } from '../support/pgbouncer-suite.js';
import {
  allocate,
  baseAmountOf,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  toleratePoolTeardown,
  type AllocationElement,
} from '../support/stock-api.js';
import { allViolations, storedUnits, totalsOf } from '../support/stock-invariants.js';

/**
 * Issue 17: three instances, each with its own pools as server.ts opens them (DB_POOL_MAX=10, plus the events and
 * health pools), allocate contended stock through one PgBouncer in transaction mode with three server connections.
 */
const SERVER_CONNECTIONS = 3;
const INSTANCES = 3;
const REQUESTS_PER_INSTANCE = 30;

interface Instance {
  readonly app: Express;
  readonly database: Database;
  readonly events: EventsRuntime;
}

const allocatedBy = (responses: readonly Response[]): number =>
  responses
    .flatMap((response) => response.body as AllocationElement[])
    .reduce((sum, element) => sum + baseAmountOf(element.qtyAllocated), 0);

describeWithPgBouncer('three instances through one PgBouncer (issue 17)', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  const instances: Instance[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    bouncer = await startPgBouncer({ serverUrl: db.url, poolSize: SERVER_CONNECTIONS });
    const logger = pino({ level: 'silent' });
    const config = testConfig({
      DATABASE_URL: bouncer.urlOf(db.name),
      DATABASE_DIRECT_URL: db.url,
      DATABASE_POOL_MODE: 'transaction',
      DB_POOL_MAX: '10',
    });
    for (let i = 0; i < INSTANCES; i++) {
      const database = await openDatabase(config, logger);
      toleratePoolTeardown(database.pool);
      const events = startEvents(database.pool, config, logger, database.sessionPool);
      instances.push({ app: createApp({ config, pool: database.pool, logger, events }), database, events });
    }
  });
  afterAll(async () => {
    for (const instance of instances) {
      await instance.events.stop();
      await instance.database.close();
    }
    await bouncer?.stop();
    await db?.drop();
  });

  /** 50 PC in ten units of 5 in five LoadUnits on two TransportUnits. */
  async function fiftyPieces(): Promise<string> {
    const app = instances[0]!.app;
    const sku = await givenProduct(app);
    for (let t = 0; t < 2; t++) {
      const transportUnit = await givenTransportUnitOn(app, (await givenLocation(app)).locationId);
      for (const position of t === 0 ? ['1', '2', '3'] : ['1', '2']) {
        await givenUnitsIn(app, transportUnit, position, sku, [{ quantity: pc(5) }, { quantity: pc(5) }]);
      }
    }
    return sku;
  }

  /** Runs `load` while sampling the pooler's client and server connections; answers its result and the peaks. */
  async function sampled<T>(load: () => Promise<T>): Promise<{ result: T; clients: number; servers: number }> {
    let [clients, servers, running] = [0, 0, true];
    const sampler = (async () => {
      while (running) {
        clients = Math.max(clients, await bouncer.clientConnections(db.name));
        servers = Math.max(servers, await bouncer.serverConnections(db.name));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      return { result: await load(), clients, servers };
    } finally {
      running = false;
      await sampler;
    }
  }

  it('allocate exactly the 50 PC there are when 90 requests of 1 PC arrive at once at three instances', async () => {
    const sku = await fiftyPieces();
    const started = Date.now();

    const {
      result: responses,
      clients,
      servers,
    } = await sampled(() =>
      Promise.all(
        instances.flatMap((instance) =>
          Array.from({ length: REQUESTS_PER_INSTANCE }, () => allocate(instance.app, { sku, qty: pc(1) })),
        ),
      ),
    );
    const elapsedMs = Date.now() - started;

    expect(responses.map((response) => response.status)).toEqual(Array(INSTANCES * REQUESTS_PER_INSTANCE).fill(200));
    expect(allocatedBy(responses)).toBe(50);
    const ids = responses.flatMap((response) => (response.body as AllocationElement[]).map((e) => e.reservationId));
    expect(new Set(ids).size).toBe(50);
    const units = await storedUnits(db.pool, [sku]);
    expect(units.map((unit) => unit.reservedBase)).toEqual(units.map((unit) => unit.qtyBase));
    expect(await allViolations(db.pool)).toEqual([]);
    expect(servers).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    expect(clients).toBeGreaterThan(SERVER_CONNECTIONS);
    // eslint-disable-next-line no-console -- the figures of a pooled run, for docs/scaling.md
    console.log(
      `pgbouncer: ${responses.length} allocations from ${INSTANCES} instances in ${elapsedMs} ms, ` +
        `at most ${clients} client connections on at most ${servers} server connections`,
    );
  });

  it('refuse exactly the requests that no longer fit with allowPartial=false, across the three', async () => {
    const sku = await fiftyPieces();

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        allocate(instances[i % INSTANCES]!.app, { sku, qty: pc(3) }, '?allowPartial=false'),
      ),
    );

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(16).fill(200), ...Array(14).fill(409)]);
    expect(allocatedBy(responses.filter((response) => response.status === 200))).toBe(48);
    expect(await totalsOf(db.pool, sku)).toEqual({ qty: '50', reserved: '48', units: 10 });
    expect(await allViolations(db.pool)).toEqual([]);
  });
});
