import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectApiDeclined } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { UUID } from '../support/http.js';
import {
  allocate,
  call,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  qtyAvailableOf,
  release,
  type AllocationElement,
  type CreatedUnit,
} from '../support/stock-api.js';
import { allViolations, storedUnits } from '../support/stock-invariants.js';

/** D23 release and D24 ledger rows of reservations. */
const ctx = useTestApp();

interface Movement {
  type: string;
  quantityBefore: unknown;
  quantityAfter: unknown;
  reservedBefore: unknown;
  reservedAfter: unknown;
  reservationId?: string;
  actor: string;
  from?: unknown;
  to?: unknown;
}

/** 3 PC and 4 PC in one LoadUnit, 10 PC in another; 9 PC reserved from them (3 + 4 + 2). */
async function reserved(): Promise<{ sku: string; units: CreatedUnit[]; reservationId: string }> {
  const sku = await givenProduct(ctx.app);
  const location = await givenLocation(ctx.app);
  const bk = await givenTransportUnitOn(ctx.app, location.locationId);
  const units = [
    ...(await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pc(3) }, { quantity: pc(4) }])),
    ...(await givenUnitsIn(ctx.app, bk, '2', sku, [{ quantity: pc(10) }])),
  ];
  const response = await allocate(ctx.app, { sku, qty: pc(9) });
  expect(response.status).toBe(200);
  const body = response.body as AllocationElement[];
  expect(body.map((element) => [element.loadUnitPosition, element.qtyAllocated]).sort()).toEqual([
    ['1', pc(7)],
    ['2', pc(2)],
  ]);
  return { sku, units, reservationId: body[0]!.reservationId };
}

async function movementsOf(pKey: string): Promise<Movement[]> {
  const response = await call(ctx.app, 'get', `/v1/packaging-units/${pKey}/movements`);
  expect(response.status).toBe(200);
  return response.body as Movement[];
}

describe('reservations', () => {
  it('lowers qtyAvailable and writes one RESERVE ledger row per unit', async () => {
    const { units, reservationId } = await reserved();

    const available = await Promise.all(units.map((unit) => qtyAvailableOf(ctx.app, unit.pKey)));
    expect(available).toEqual([pc(0), pc(0), pc(8)]);
    const latest = await Promise.all(units.map(async (unit) => (await movementsOf(unit.pKey))[0]));
    expect(latest).toEqual(
      [
        [3, 0, 3],
        [4, 0, 4],
        [10, 0, 2],
      ].map(([qty, before, after]) =>
        expect.objectContaining({
          type: 'RESERVE',
          quantityBefore: pc(qty),
          quantityAfter: pc(qty),
          reservedBefore: pc(before),
          reservedAfter: pc(after),
          reservationId,
          actor: 'test-user',
        }),
      ),
    );
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM stock_movement WHERE kind = 'RESERVE' AND reservation_id = $1",
      [reservationId],
    );
    expect(Number(rows[0]!.n)).toBe(3);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });
});

describe('DELETE /allocation/reservations/{reservationId}', () => {
  it('answers 204, gives the quantity back and writes RELEASE rows', async () => {
    const { sku, units, reservationId } = await reserved();

    const response = await release(ctx.app, reservationId);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const available = await Promise.all(units.map((unit) => qtyAvailableOf(ctx.app, unit.pKey)));
    expect(available).toEqual([pc(3), pc(4), pc(10)]);
    expect((await storedUnits(ctx.db.pool, [sku])).map((unit) => unit.reservedBase)).toEqual(['0', '0', '0']);
    expect((await movementsOf(units[2]!.pKey))[0]).toEqual(
      expect.objectContaining({ type: 'RELEASE', reservedBefore: pc(2), reservedAfter: pc(0), reservationId }),
    );
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('names the Location in the RELEASE row of a reserved unit that was moved onto it', async () => {
    const { units, reservationId } = await reserved();
    const target = await givenLocation(ctx.app);
    const moved = await call(ctx.app, 'put', `/v1/packaging-units/${units[2]!.pKey}`).send({
      actualLocation: { locationId: target.locationId },
    });
    expect(moved.status).toBe(200);

    expect((await release(ctx.app, reservationId)).status).toBe(204);

    const place = { locationId: target.locationId };
    expect((await movementsOf(units[2]!.pKey))[0]).toEqual(
      expect.objectContaining({ type: 'RELEASE', from: place, to: place, reservationId }),
    );
  });

  it('answers 204 again for a reservation already released and changes nothing', async () => {
    const { sku, units, reservationId } = await reserved();
    expect((await release(ctx.app, reservationId)).status).toBe(204);
    const ledgerRows = (await movementsOf(units[0]!.pKey)).length;

    const again = await release(ctx.app, reservationId);

    expect(again.status).toBe(204);
    expect((await storedUnits(ctx.db.pool, [sku])).map((unit) => unit.reservedBase)).toEqual(['0', '0', '0']);
    expect(await movementsOf(units[0]!.pKey)).toHaveLength(ledgerRows);
  });

  it('makes released stock allocatable again', async () => {
    const { sku, reservationId } = await reserved();
    expect((await release(ctx.app, reservationId)).status).toBe(204);

    const response = await allocate(ctx.app, { sku, qty: pc(17) });

    expect(response.status).toBe(200);
    const body = response.body as AllocationElement[];
    const byPosition = [...body].sort((a, b) => a.loadUnitPosition.localeCompare(b.loadUnitPosition));
    expect(byPosition.map((element) => element.qtyAllocated)).toEqual([pc(7), pc(10)]);
    expect(body[0]!.reservationId).toMatch(UUID);
    expect(body[0]!.reservationId).not.toBe(reservationId);
  });

  it.each([
    ['a random UUID', randomUUID()],
    ['a malformed id', 'abc'],
  ])('answers 404 owms.wms.inv.res.notFound for %s that was never issued', async (_what, reservationId) => {
    const response = await release(ctx.app, reservationId);
    expectApiDeclined(response, {
      status: 404,
      message: `No reservation [${reservationId}] was ever issued`,
      messageKey: 'owms.wms.inv.res.notFound',
      obj: [reservationId],
      class: 'String',
    });
  });
});
