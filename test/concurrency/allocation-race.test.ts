import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { lockWaiter } from '../support/pg-activity.js';
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
  release,
  toleratePoolTeardown,
  type AllocationElement,
  type CreatedUnit,
} from '../support/stock-api.js';
import { allViolations, storedUnits, totalsOf } from '../support/stock-invariants.js';

/** D23: never over-reserved, whatever the number of concurrent requests; enforced in PostgreSQL. */
const ctx = useTestApp();
beforeAll(() => toleratePoolTeardown(ctx.db.pool));

const allocatedBy = (responses: readonly Response[]): number =>
  responses
    .flatMap((response) => response.body as AllocationElement[])
    .reduce((sum, element) => sum + baseAmountOf(element.qtyAllocated), 0);

const statusesOf = (responses: readonly Response[]): Record<number, number> => {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

/** 25 PC in five units (3 + 7 + 5 + 4 + 6) in three LoadUnits on two TransportUnits. */
async function twentyFivePieces(): Promise<string> {
  const sku = await givenProduct(ctx.app);
  const first = await givenTransportUnitOn(ctx.app, (await givenLocation(ctx.app)).locationId);
  const second = await givenTransportUnitOn(ctx.app, (await givenLocation(ctx.app)).locationId);
  await givenUnitsIn(ctx.app, first, '1', sku, [{ quantity: pc(3) }, { quantity: pc(7) }]);
  await givenUnitsIn(ctx.app, first, '2', sku, [{ quantity: pc(5) }]);
  await givenUnitsIn(ctx.app, second, '1', sku, [{ quantity: pc(4) }, { quantity: pc(6) }]);
  return sku;
}

describe('parallel allocations', () => {
  it('allocate exactly the 25 PC there are when 50 requests of 1 PC arrive at once', async () => {
    const sku = await twentyFivePieces();

    const responses = await Promise.all(Array.from({ length: 50 }, () => allocate(ctx.app, { sku, qty: pc(1) })));

    expect(statusesOf(responses)).toEqual({ 200: 50 });
    expect(allocatedBy(responses)).toBe(25);
    expect(responses.filter((response) => (response.body as unknown[]).length > 0)).toHaveLength(25);
    const units = await storedUnits(ctx.db.pool, [sku]);
    expect(units.map((unit) => unit.reservedBase)).toEqual(units.map((unit) => unit.qtyBase));
    const { rows } = await ctx.db.pool.query<{ ids: string; amount: string }>(
      `SELECT count(DISTINCT r.reservation_id)::text AS ids, sum(r.qty_base)::text AS amount
         FROM reservation r JOIN packaging_unit pu ON pu.id = r.packaging_unit_id
         JOIN product p ON p.id = pu.product_id WHERE p.sku = $1 AND r.released_at IS NULL`,
      [sku],
    );
    expect(rows[0]).toEqual({ ids: '25', amount: '25' });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('refuse exactly the requests that no longer fit with allowPartial=false', async () => {
    const sku = await twentyFivePieces();

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => allocate(ctx.app, { sku, qty: pc(3) }, '?allowPartial=false')),
    );

    expect(statusesOf(responses)).toEqual({ 200: 8, 409: 2 });
    expect(allocatedBy(responses.filter((response) => response.status === 200))).toBe(24);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '25', reserved: '24', units: 5 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('allocate and release at once without losing or inventing stock', async () => {
    const sku = await twentyFivePieces();
    const first = await Promise.all(Array.from({ length: 10 }, () => allocate(ctx.app, { sku, qty: pc(2) })));
    const ids = first.map((response) => (response.body as AllocationElement[])[0]!.reservationId);

    const mixed = await Promise.all([
      ...ids.slice(0, 5).map((id) => call(ctx.app, 'delete', `/allocation/reservations/${id}`)),
      ...Array.from({ length: 10 }, () => allocate(ctx.app, { sku, qty: pc(2) })),
    ]);

    expect(mixed.filter((response) => response.status >= 500)).toEqual([]);
    const reserved = 20 - 10 + allocatedBy(mixed.slice(5));
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '25', reserved: String(reserved), units: 5 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });
});

describe('releases and deletes racing allocations', () => {
  it('give a reservation back exactly once when it is released ten times at once', async () => {
    const sku = await twentyFivePieces();
    const allocated = await allocate(ctx.app, { sku, qty: pc(12) });
    const { reservationId } = (allocated.body as AllocationElement[])[0]!;

    const releases = await Promise.all(Array.from({ length: 10 }, () => release(ctx.app, reservationId)));

    expect(statusesOf(releases)).toEqual({ 204: 10 });
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '25', reserved: '0', units: 5 });
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM stock_movement WHERE kind = 'RELEASE' AND reservation_id = $1",
      [reservationId],
    );
    const { rows: reserves } = await ctx.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM stock_movement WHERE kind = 'RESERVE' AND reservation_id = $1",
      [reservationId],
    );
    expect(rows[0]!.n).toBe(reserves[0]!.n);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('never delete reserved stock: a delete and an allocation of one unit, 10 rounds', async () => {
    const location = await givenLocation(ctx.app);
    for (let round = 0; round < 10; round++) {
      const sku = await givenProduct(ctx.app);
      const bk = await givenTransportUnitOn(ctx.app, location.locationId);
      const [unit] = await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pc(10) }]);

      const [deleted, allocated] = await Promise.all([
        call(ctx.app, 'delete', `/v1/packaging-units/${unit!.pKey}`),
        allocate(ctx.app, { sku, qty: pc(3) }),
      ]);

      // Either the delete came first (nothing left to allocate) or the allocation did (reserved stock stays).
      const outcome = { round, deleted: deleted.status, allocated: allocatedBy([allocated]) };
      expect([
        { round, deleted: 204, allocated: 0 },
        { round, deleted: 409, allocated: 3 },
      ]).toContainEqual(outcome);
      expect(await allViolations(ctx.db.pool)).toEqual([]);
    }
  });
});

describe('a move racing an allocation on the same unit', () => {
  /** 10 PC in a LoadUnit (the one raced for), and an empty LoadUnit on another TransportUnit. */
  async function raceSetup(): Promise<{ sku: string; source: string; unit: CreatedUnit; target: string }> {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const source = await givenTransportUnitOn(ctx.app, location.locationId);
    const target = await givenTransportUnitOn(ctx.app, location.locationId);
    await givenDivided(ctx.app, target, 1);
    const [unit] = await givenUnitsIn(ctx.app, source, '1', sku, [{ quantity: pc(10) }]);
    return { sku, source, unit: unit!, target };
  }

  const moves = [
    'the whole unit into another LoadUnit',
    'a part of the unit into another LoadUnit',
    'the whole LoadUnit content onto a Location',
    'a part of the LoadUnit content onto a Location',
  ] as const;

  it.each(moves)('never leaves it over-reserved when the move takes %s (20 rounds)', async (move) => {
    const location = await givenLocation(ctx.app);
    for (let round = 0; round < 20; round++) {
      const { sku, source, unit, target } = await raceSetup();
      const quantity = move.startsWith('the whole') ? {} : { quantity: pc(10 - (round % 10)) };
      const moving = move.endsWith('LoadUnit')
        ? call(ctx.app, 'put', `/v1/packaging-units/${unit.pKey}`).send({
            ...quantity,
            loadUnit: { transportUnitBK: target, physicalPosition: '1' },
          })
        : call(ctx.app, 'put', `/v1/transport-units/${source}/load-units/1/packaging-units`).send({
            product: { sku },
            ...quantity,
            actualLocation: { locationId: location.locationId },
          });

      const [moved, allocated] = await Promise.all([moving, allocate(ctx.app, { sku, qty: pc(1 + (round % 10)) })]);

      // 409 owms.wms.inv.pu.reserved is the one refusal: a partial move finding everything reserved.
      const outcome = { round, move: moved.status, allocate: allocated.status, body: moved.body as unknown };
      expect(outcome).toEqual({
        ...outcome,
        move: moved.status === 409 ? 409 : expect.toSatisfy((status: number) => status < 300),
        allocate: 200,
      });
      const totals = await totalsOf(ctx.db.pool, sku);
      expect({ round, qty: totals.qty, reserved: totals.reserved }).toEqual({
        round,
        qty: '10',
        reserved: String(allocatedBy([allocated])),
      });
      expect(await allViolations(ctx.db.pool)).toEqual([]);
    }
  });

  it('allocates a unit that a concurrent move carries whole into another LoadUnit', async () => {
    const { sku, unit, target } = await raceSetup();
    // The test holds the unit; the move queues for it first, the allocation second; then both go.
    const holder = await ctx.db.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM packaging_unit WHERE p_key = $1 FOR UPDATE', [unit.pKey]);
    const moving = call(ctx.app, 'put', `/v1/packaging-units/${unit.pKey}`)
      .send({ loadUnit: { transportUnitBK: target, physicalPosition: '1' } })
      .then((response) => response);
    const mover = (await lockWaiter(ctx.db.pool, 'packaging_unit')).pid;
    const allocating = allocate(ctx.app, { sku, qty: pc(3) }).then((response) => response);
    await lockWaiter(ctx.db.pool, 'ORDER BY pu.id FOR UPDATE', [mover]);
    await holder.query('ROLLBACK');
    holder.release();

    const [moved, allocated] = await Promise.all([moving, allocating]);

    // Before and after the move the 10 PC are free in a LoadUnit: whichever goes first, 3 PC are allocated.
    expect(moved.status).toBe(200);
    expect({ status: allocated.status, body: allocated.body as unknown }).toEqual({
      status: 200,
      body: [expect.objectContaining({ transportUnitBK: target, loadUnitPosition: '1', qtyAllocated: pc(3) })],
    });
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '10', reserved: '3', units: 1 });
  });
});
