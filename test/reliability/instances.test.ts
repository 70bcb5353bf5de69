import { readdir } from 'node:fs/promises';
import type pg from 'pg';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createEmptyDatabase, type EmptyDatabase } from '../support/empty-database.js';
import { waitFor } from '../support/pg-activity.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import {
  allocate,
  baseAmountOf,
  call,
  givenDivided,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  type AllocationElement,
} from '../support/stock-api.js';
import { allViolations, storedUnits, totalsOf } from '../support/stock-invariants.js';

/**
 * Issue 7 item 4: three service processes on one fresh database, started together so that their migrations race,
 * behind a round-robin proxy. The concurrency proofs of the allocation issue must hold across the instances.
 */
const INSTANCES = 3;
let database: EmptyDatabase | undefined;
let services: ServiceProcess[] = [];
let proxy: RoundRobinProxy | undefined;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createEmptyDatabase();
  pool = database.pool(4);
  // Spawned in one go, before any is waited for: all three run their migrations at the same moment.
  services = await startServicesOnDatabase(database.url, INSTANCES, { LOG_LEVEL: 'info' });
  proxy = await startRoundRobinProxy(services.map((service) => service.port));
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await stopServices(services);
  await database?.drop();
}, 60_000);

/** Requests each instance received through the proxy while `run` ran. */
async function spreadOf(run: () => Promise<unknown>): Promise<number[]> {
  const before = [...proxy!.hits];
  await run();
  return proxy!.hits.map((hits, i) => hits - before[i]!);
}

describe('three instances started together on one fresh database', () => {
  it('apply each migration exactly once', async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
    expect(rows.map((row) => row.name)).toEqual(files);

    const applied = (): string[] =>
      services.flatMap((service) =>
        service
          .logEntries()
          .filter((entry) => entry.msg === 'migration applied')
          .map((entry) => String(entry.migration)),
      );
    // Log lines reach stdout in batches, at the latest 100 ms after they are written (src/logger.ts).
    await waitFor(
      'every migration’s log line',
      async () => (applied().length >= files.length ? true : undefined),
      5000,
    ).catch(() => undefined);
    expect(applied().sort()).toEqual(files);
  });

  it('are each UP on /actuator/health', async () => {
    const answers = await Promise.all(
      services.map(async (service) => {
        const response = await fetch(`${service.baseUrl}/actuator/health`);
        return [response.status, await response.json()];
      }),
    );
    expect(answers).toEqual(Array(INSTANCES).fill([200, { status: 'UP' }]));
  });
});

describe('behind a round-robin proxy', () => {
  const allocatedBy = (responses: readonly Response[]): number =>
    responses
      .flatMap((response) => response.body as AllocationElement[])
      .reduce((sum, element) => sum + baseAmountOf(element.qtyAllocated), 0);

  it('allocate exactly the 25 PC there are when 60 requests of 1 PC arrive at once', async () => {
    const api = proxy!.url;
    const sku = await givenProduct(api);
    const first = await givenTransportUnitOn(api, (await givenLocation(api)).locationId);
    const second = await givenTransportUnitOn(api, (await givenLocation(api)).locationId);
    await givenUnitsIn(api, first, '1', sku, [{ quantity: pc(3) }, { quantity: pc(7) }]);
    await givenUnitsIn(api, first, '2', sku, [{ quantity: pc(5) }]);
    await givenUnitsIn(api, second, '1', sku, [{ quantity: pc(4) }, { quantity: pc(6) }]);

    let responses: Response[] = [];
    const spread = await spreadOf(async () => {
      responses = await Promise.all(Array.from({ length: 60 }, () => allocate(api, { sku, qty: pc(1) })));
    });

    expect(spread).toEqual([20, 20, 20]);
    expect(responses.map((response) => response.status)).toEqual(Array(60).fill(200));
    expect(allocatedBy(responses)).toBe(25);
    const ids = responses.flatMap((response) => (response.body as AllocationElement[]).map((e) => e.reservationId));
    expect(new Set(ids).size).toBe(25);
    const units = await storedUnits(pool, [sku]);
    expect(units.map((unit) => unit.reservedBase)).toEqual(units.map((unit) => unit.qtyBase));
    expect(await allViolations(pool)).toEqual([]);
  });

  it('conserve the total when 30 partial moves out of one unit run at once', async () => {
    const api = proxy!.url;
    const sku = await givenProduct(api);
    const locations: string[] = [];
    for (let i = 0; i < 3; i++) locations.push((await givenLocation(api)).locationId);
    const source = await givenTransportUnitOn(api, locations[0]!);
    const [unit] = await givenUnitsIn(api, source, '1', sku, [{ quantity: pc(100) }]);
    const targets: string[] = [];
    for (let i = 0; i < 3; i++) {
      const transportUnitBK = await givenTransportUnitOn(api, locations[i]!);
      await givenDivided(api, transportUnitBK, 1);
      targets.push(transportUnitBK);
    }
    const fromLoadUnit = `/v1/transport-units/${source}/load-units/1/packaging-units`;
    const move = (i: number): Promise<Response> => {
      const quantity = pc(1);
      const loadUnit = { transportUnitBK: targets[i % 3]!, physicalPosition: '1' };
      const actualLocation = { locationId: locations[i % 3]! };
      switch (i % 4) {
        case 0:
          return call(api, 'put', `/v1/packaging-units/${unit!.pKey}`).send({ quantity, loadUnit });
        case 1:
          return call(api, 'put', `/v1/packaging-units/${unit!.pKey}`).send({ quantity, actualLocation });
        case 2:
          return call(api, 'put', fromLoadUnit).send({
            product: { sku },
            quantity,
            targetTransportUnitBK: loadUnit.transportUnitBK,
            targetLoadUnitPosition: '1',
          });
        default:
          return call(api, 'put', fromLoadUnit).send({ product: { sku }, quantity, actualLocation });
      }
    };

    let responses: Response[] = [];
    const spread = await spreadOf(async () => {
      responses = await Promise.all(Array.from({ length: 30 }, (_, i) => move(i)));
    });

    expect(spread).toEqual([10, 10, 10]);
    expect(responses.filter((r) => r.status >= 300).map((r) => [r.status, r.body as unknown])).toEqual([]);
    expect(await totalsOf(pool, sku)).toMatchObject({ qty: '100', reserved: '0' });
    const units = await storedUnits(pool, [sku]);
    expect(units.find((stored) => stored.pKey === unit!.pKey)?.qtyBase).toBe('70');
    expect(await allViolations(pool)).toEqual([]);
  });
});
