import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
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
import { allViolations, storedUnits } from '../support/stock-invariants.js';

/** D23: never over-reserved "whatever the number of service instances" — two processes on one database. */
const ctx = useTestApp();
let services: ServiceProcess[] = [];

beforeAll(async () => {
  toleratePoolTeardown(ctx.db.pool);
  services = await startServicesOnDatabase(ctx.db.url, 2);
}, 240_000);

afterAll(async () => {
  await stopServices(services);
}, 60_000);

const allocatedBy = (responses: readonly Response[]): number =>
  responses
    .flatMap((response) => response.body as AllocationElement[])
    .reduce((sum, element) => sum + baseAmountOf(element.qtyAllocated), 0);

/** 25 PC in five units in LoadUnits, seeded through the first instance. */
async function twentyFivePieces(): Promise<string> {
  const api = services[0]!.baseUrl;
  const sku = await givenProduct(api);
  const first = await givenTransportUnitOn(api, (await givenLocation(api)).locationId);
  const second = await givenTransportUnitOn(api, (await givenLocation(api)).locationId);
  await givenUnitsIn(api, first, '1', sku, [{ quantity: pc(3) }, { quantity: pc(7) }]);
  await givenUnitsIn(api, first, '2', sku, [{ quantity: pc(5) }]);
  await givenUnitsIn(api, second, '1', sku, [{ quantity: pc(4) }, { quantity: pc(6) }]);
  return sku;
}

describe('two service instances on one database', () => {
  it('allocate exactly the 25 PC there are when 50 requests of 1 PC alternate between them', async () => {
    const sku = await twentyFivePieces();

    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => allocate(services[i % 2]!.baseUrl, { sku, qty: pc(1) })),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200));
    expect(allocatedBy(responses)).toBe(25);
    const ids = responses.flatMap((response) => (response.body as AllocationElement[]).map((e) => e.reservationId));
    expect(new Set(ids).size).toBe(25);
    const units = await storedUnits(ctx.db.pool, [sku]);
    expect(units.map((unit) => unit.reservedBase)).toEqual(units.map((unit) => unit.qtyBase));
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('refuse exactly the requests that no longer fit with allowPartial=false, across both', async () => {
    const sku = await twentyFivePieces();

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        allocate(services[i % 2]!.baseUrl, { sku, qty: pc(3) }, '?allowPartial=false'),
      ),
    );

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(8).fill(200), 409, 409]);
    expect(allocatedBy(responses.filter((response) => response.status === 200))).toBe(24);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });
});
