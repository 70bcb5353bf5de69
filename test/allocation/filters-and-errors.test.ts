import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity, uniqueSku } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  allocate,
  givenGroups,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  unique,
  type AllocationElement,
} from '../support/stock-api.js';
import { storedUnits } from '../support/stock-invariants.js';

/** D23: restricting an allocation to LocationGroups, refusing a short one, and the 4xx answers. */
const ctx = useTestApp();

async function reservationRowsOf(pool: pg.Pool, sku: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM reservation r
       JOIN packaging_unit pu ON pu.id = r.packaging_unit_id JOIN product p ON p.id = pu.product_id
      WHERE p.sku = $1`,
    [sku],
  );
  return Number(rows[0]!.n);
}

describe('POST /allocation/transport-units?sourceLocationGroupNames=', () => {
  // ZONE contains ZONE-A, which contains ZONE-A1; OTHER stands apart. A TransportUnit stands in each, and every
  // Product of a test gets a LoadUnit of its own (at the position named like its SKU) with 5 PC on each of them.
  const names = { zone: unique('ZONE'), zoneA: unique('ZONE-A'), zoneA1: unique('ZONE-A1'), other: unique('OTHER') };
  const tus = { zone: '', zoneA: '', zoneA1: '', other: '' };
  let sku = '';

  beforeAll(async () => {
    await givenGroups(
      ctx.app,
      { name: names.zoneA1, parent: names.zoneA },
      { name: names.zoneA, parent: names.zone },
      { name: names.zone },
      { name: names.other },
    );
    for (const key of ['zone', 'zoneA', 'zoneA1', 'other'] as const) {
      const location = await givenLocation(ctx.app, { locationGroupName: names[key] });
      tus[key] = await givenTransportUnitOn(ctx.app, location.locationId);
    }
  });

  const fresh = async (): Promise<void> => {
    sku = await givenProduct(ctx.app);
    for (const bk of Object.values(tus)) await givenUnitsIn(ctx.app, bk, sku, sku, [{ quantity: pc(5) }]);
  };

  async function sourcesOf(query: string): Promise<string[]> {
    const response = await allocate(ctx.app, { sku, qty: pc(100) }, query);
    expect({ status: response.status, type: response.headers['content-type'] }).toEqual({
      status: 200,
      type: JSON_UTF8,
    });
    return (response.body as AllocationElement[]).map((element) => element.transportUnitBK).sort();
  }

  it('takes only from TransportUnits in the group or its child groups, at any depth', async () => {
    await fresh();
    const inZone = [tus.zone, tus.zoneA, tus.zoneA1].sort();
    expect(await sourcesOf(`?sourceLocationGroupNames=${names.zone}`)).toEqual(inZone);
    expect(await sourcesOf('')).toEqual([tus.other]);
  });

  it('takes only from the child group (and its own children) when the child is named', async () => {
    await fresh();
    expect(await sourcesOf(`?sourceLocationGroupNames=${names.zoneA}`)).toEqual([tus.zoneA, tus.zoneA1].sort());
  });

  it('accepts several groups separated by commas', async () => {
    await fresh();
    expect(await sourcesOf(`?sourceLocationGroupNames=${names.zoneA1},${names.other}`)).toEqual(
      [tus.zoneA1, tus.other].sort(),
    );
  });

  it('accepts several groups as repeated parameters', async () => {
    await fresh();
    const query = `?sourceLocationGroupNames=${names.zoneA1}&sourceLocationGroupNames=${names.other}`;
    expect(await sourcesOf(query)).toEqual([tus.zoneA1, tus.other].sort());
  });

  it('answers 404 owms.common.common.lg.notFoundByName for an unknown group and reserves nothing', async () => {
    await fresh();
    const missing = unique('NO-SUCH-GROUP');
    const response = await allocate(ctx.app, { sku, qty: pc(1) }, `?sourceLocationGroupNames=${names.zone},${missing}`);
    expectApiDeclined(response, {
      status: 404,
      message: `LocationGroup with name [${missing}] not found`,
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: [missing],
      class: 'String',
    });
    expect(await reservationRowsOf(ctx.db.pool, sku)).toBe(0);
  });
});

describe('POST /allocation/transport-units errors', () => {
  async function stockOf(quantity: number): Promise<string> {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const bk = await givenTransportUnitOn(ctx.app, location.locationId);
    await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pc(quantity - 5) }]);
    await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pc(5) }]);
    return sku;
  }

  /** D23's 409 for a short allocation with allowPartial=false. */
  function expectInsufficient(
    response: Parameters<typeof expectApiDeclined>[0],
    sku: string,
    requested: string,
    available: string,
  ): void {
    expectApiDeclined(response, {
      status: 409,
      message: `Only ${available} of Product [${sku}] can be allocated, ${requested} were requested`,
      messageKey: 'owms.wms.inv.alloc.insufficient',
      obj: [sku, requested, available],
      class: 'String',
    });
  }

  it('answers 409 owms.wms.inv.alloc.insufficient with allowPartial=false and reserves nothing', async () => {
    const sku = await stockOf(12);

    const response = await allocate(ctx.app, { sku, qty: pc(30) }, '?allowPartial=false');

    expectInsufficient(response, sku, '30 PC', '12 PC');
    expect((await storedUnits(ctx.db.pool, [sku])).map((unit) => unit.reservedBase)).toEqual(['0', '0']);
    expect(await reservationRowsOf(ctx.db.pool, sku)).toBe(0);
  });

  it.each(['LOCKED', 'QC_LOCKED'])(
    'answers 409 insufficient with 0 PC available for a %s Product with allowPartial=false',
    async (availabilityState) => {
      const sku = await givenProduct(ctx.app, { availabilityState });
      const location = await givenLocation(ctx.app);
      await givenUnitsIn(ctx.app, await givenTransportUnitOn(ctx.app, location.locationId), '1', sku, [
        { quantity: pc(10) },
      ]);

      const response = await allocate(ctx.app, { sku, qty: pc(3) }, '?allowPartial=false');

      expectInsufficient(response, sku, '3 PC', '0 PC');
      expect(await reservationRowsOf(ctx.db.pool, sku)).toBe(0);
    },
  );

  it('allocates in full with allowPartial=false when there is enough', async () => {
    const sku = await stockOf(12);
    const response = await allocate(ctx.app, { sku, qty: aQuantity(1, 'DOZ') }, '?allowPartial=false');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([expect.objectContaining({ qtyAllocated: aQuantity(1, 'DOZ') })]);
  });

  it('answers the not.found 404 for an unknown SKU', async () => {
    const sku = uniqueSku('UNKNOWN');
    const response = await allocate(ctx.app, { sku, qty: pc(1) });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: `No Product with SKU [${sku}] exists`,
      messageKey: 'not.found',
      httpStatus: '404',
    });
  });

  it('answers 400 for a Weight quantity of a Piece Product', async () => {
    const sku = await stockOf(12);
    const response = await allocate(ctx.app, { sku, qty: aQuantity(1, 'KG') });
    expectValidationError(response, [['qty', "must be a Piece quantity like the Product's baseUnit"]]);
    expect(await reservationRowsOf(ctx.db.pool, sku)).toBe(0);
  });

  it.each([0, -3])('answers 400 for a quantity of %d', async (magnitude) => {
    const sku = await stockOf(12);
    const response = await allocate(ctx.app, { sku, qty: pc(magnitude) });
    expectValidationError(response, [['qty.magnitude', 'must be greater than 0']]);
    expect(await reservationRowsOf(ctx.db.pool, sku)).toBe(0);
  });

  it('answers 400 when sku or qty is missing', async () => {
    const response = await allocate(ctx.app, {});
    expectValidationError(response, [
      ['sku', 'required'],
      ['qty', 'required'],
    ]);
  });
});
