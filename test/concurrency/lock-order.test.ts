import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { deadlockCount, deadlocksSince, lockWaiter } from '../support/pg-activity.js';
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
  toleratePoolTeardown,
  type AllocationElement,
} from '../support/stock-api.js';
import { allViolations, storedUnits, totalsOf } from '../support/stock-invariants.js';

/**
 * D23 / ARCHITECTURE "Transactions": row locks are taken in one fixed order, so writers queue instead of
 * deadlocking. A deadlock is retried by withTransaction and so mostly invisible; after five in a row the client
 * gets a 503. PostgreSQL counts every deadlock it breaks (pg_stat_database.deadlocks), which is what these tests
 * read besides the answers.
 */
const ctx = useTestApp();
beforeAll(() => toleratePoolTeardown(ctx.db.pool));

async function stockInLoadUnit(quantities: number[]): Promise<{ sku: string; source: string; location: string }> {
  const sku = await givenProduct(ctx.app);
  const location = (await givenLocation(ctx.app)).locationId;
  const source = await givenTransportUnitOn(ctx.app, location);
  await givenUnitsIn(
    ctx.app,
    source,
    '1',
    sku,
    quantities.map((quantity) => ({ quantity: pc(quantity) })),
  );
  return { sku, source, location };
}

function moveOutOfLoadUnit(source: string, sku: string, location: string, quantity: number): PromiseLike<Response> {
  return call(ctx.app, 'put', `/v1/transport-units/${source}/load-units/1/packaging-units`).send({
    product: { sku },
    quantity: pc(quantity),
    actualLocation: { locationId: location },
  });
}

/**
 * Holds the unit in a transaction of the test, lets `first` queue for it, then starts `second` and waits until it
 * waits for a lock too, then lets both go: the order of their lock requests is then fixed, not left to chance.
 */
async function behindHeldUnit(
  unitId: number,
  first: () => PromiseLike<Response>,
  firstWaitsIn: string,
  second: () => PromiseLike<Response>,
): Promise<[Response, Response]> {
  const holder = await ctx.db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM packaging_unit WHERE id = $1 FOR UPDATE', [unitId]);
    const firstAnswer = first().then((response) => response);
    const firstPid = (await lockWaiter(ctx.db.pool, firstWaitsIn)).pid;
    const secondAnswer = second().then((response) => response);
    await lockWaiter(ctx.db.pool, '', [firstPid]);
    await holder.query('COMMIT');
    return await Promise.all([firstAnswer, secondAnswer]);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    holder.release();
  }
}

describe('row locks taken in one order', () => {
  it('a move out of a LoadUnit and an allocation of its unit do not deadlock', async () => {
    const { sku, source, location } = await stockInLoadUnit([10]);
    const [unit] = await storedUnits(ctx.db.pool, [sku]);
    const before = await deadlockCount(ctx.db.pool);

    const [allocated, moved] = await behindHeldUnit(
      unit!.id,
      () => allocate(ctx.app, { sku, qty: pc(3) }),
      'ORDER BY pu.id FOR UPDATE',
      () => moveOutOfLoadUnit(source, sku, location, 4),
    );

    expect([allocated.status, moved.status]).toEqual([200, 204]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '10', reserved: '3', units: 2 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
    expect(await deadlocksSince(ctx.db.pool, before), 'deadlocks PostgreSQL broke between the two').toBe(0);
  });

  it('moves of one unit by its key and by its LoadUnit into one LoadUnit do not deadlock', async () => {
    const { sku, source } = await stockInLoadUnit([10]);
    const target = await givenTransportUnitOn(ctx.app, (await givenLocation(ctx.app)).locationId);
    await givenDivided(ctx.app, target, 1);
    const [unit] = await storedUnits(ctx.db.pool, [sku]);
    const before = await deadlockCount(ctx.db.pool);

    const [byKey, byLoadUnit] = await behindHeldUnit(
      unit!.id,
      () =>
        call(ctx.app, 'put', `/v1/packaging-units/${unit!.pKey}`).send({
          quantity: pc(1),
          loadUnit: { transportUnitBK: target, physicalPosition: '1' },
        }),
      'packaging_unit',
      () =>
        call(ctx.app, 'put', `/v1/transport-units/${source}/load-units/1/packaging-units`).send({
          product: { sku },
          quantity: pc(1),
          targetTransportUnitBK: target,
          targetLoadUnitPosition: '1',
        }),
    );

    expect([byKey.status, byLoadUnit.status]).toEqual([200, 204]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '10', reserved: '0', units: 3 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
    expect(await deadlocksSince(ctx.db.pool, before), 'deadlocks PostgreSQL broke between the two').toBe(0);
  });

  it('15 partial moves and 15 allocations at once: no 5xx, no deadlock, nothing lost', async () => {
    const { sku, source, location } = await stockInLoadUnit([50, 50]);
    const before = await deadlockCount(ctx.db.pool);

    const responses = await Promise.all([
      ...Array.from({ length: 15 }, () => moveOutOfLoadUnit(source, sku, location, 1)),
      ...Array.from({ length: 15 }, () => allocate(ctx.app, { sku, qty: pc(1) })),
    ]);

    const reserved = responses
      .slice(15)
      .flatMap((response) => (response.status === 200 ? (response.body as AllocationElement[]) : []))
      .reduce((sum, element) => sum + baseAmountOf(element.qtyAllocated), 0);
    const totals = await totalsOf(ctx.db.pool, sku);
    expect({ qty: totals.qty, reserved: totals.reserved }).toEqual({ qty: '100', reserved: String(reserved) });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
    const failed = responses.filter((response) => response.status >= 500);
    expect({
      failed: failed.map((response) => [response.status, (response.body as { path?: string }).path]),
      deadlocks: await deadlocksSince(ctx.db.pool, before),
    }).toEqual({ failed: [], deadlocks: 0 });
  });
});

describe('a writer that waited for a unit', () => {
  it('moves out of a LoadUnit what the unit holds once the writer before it has committed', async () => {
    const { sku, source, location } = await stockInLoadUnit([10]);
    const [unit] = await storedUnits(ctx.db.pool, [sku]);
    const holder = await ctx.db.pool.connect();
    let moved: Response;
    try {
      await holder.query('BEGIN');
      // The writer before the move (here the test itself) leaves 4 PC in the unit.
      await holder.query(`UPDATE packaging_unit SET qty_magnitude = 4, qty_code = 'PC' WHERE id = $1`, [unit!.id]);
      const answer = moveOutOfLoadUnit(source, sku, location, 6).then((response) => response);
      await lockWaiter(ctx.db.pool, 'FOR UPDATE');
      await holder.query('COMMIT');
      moved = await answer;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }

    // As read before the wait (10 PC) the move would split 6 PC off and leave 4: 10 PC where 4 are.
    expect(moved.status).toBe(204);
    const after = await storedUnits(ctx.db.pool, [sku]);
    expect(after.map(({ id, qtyBase, loadUnitId }) => ({ id, qtyBase, inLoadUnit: loadUnitId !== null }))).toEqual([
      { id: unit!.id, qtyBase: '4', inLoadUnit: false },
    ]);
  });
});
