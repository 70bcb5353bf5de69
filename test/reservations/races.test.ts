import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { lockWaiter } from '../support/pg-activity.js';
import {
  allocate,
  call,
  expectStatus,
  givenDivided,
  givenLocation,
  givenTransportUnitOn,
  unique,
  type AllocationElement,
} from '../support/stock-api.js';
import { allViolations, totalsOf } from '../support/stock-invariants.js';
import { eventsOf, getReservation, givenReservation, pcOf, pick, storedUnit } from './reservation-api.js';

/** D32 under concurrency: picks never take more than a reservation holds, nor let allocation take picked goods. */
const ctx = useTestApp();

describe('concurrent picks', () => {
  it('never picks more than the reservation holds when 50 picks run at once: exactly 12 of 2 PC out of 25', async () => {
    const given = await givenReservation(ctx, [40], 25);
    const source = given.units[0]!.pKey;
    const target = { locationId: (await givenLocation(ctx.app)).locationId };

    const responses = await Promise.all(
      Array.from({ length: 50 }, () => pick(ctx, given.reservationId, { pKey: source, qty: pcOf(2), target })),
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(12);
    expect(statuses.filter((status) => status === 409)).toHaveLength(38);
    expect(
      new Set(responses.filter((r) => r.status === 409).map((r) => (r.body as { messageKey: string }).messageKey)),
    ).toEqual(new Set(['owms.wms.inv.res.overpick']));
    const reservation = await getReservation(ctx, given.reservationId);
    expect([reservation.qty, reservation.picked]).toEqual([pcOf(25), pcOf(24)]);
    expect(await storedUnit(ctx, source)).toEqual(expect.objectContaining({ qty: '16', reserved: '1' }));
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '40', reserved: '25', units: 13 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('never lets an allocation racing a pick take the reserved goods', async () => {
    for (let round = 0; round < 8; round += 1) {
      const given = await givenReservation(ctx, [20], 10);
      const target = { locationId: (await givenLocation(ctx.app)).locationId };

      const [picked, allocated] = await Promise.all([
        pick(ctx, given.reservationId, { pKey: given.units[0]!.pKey, qty: pcOf(10), target }),
        allocate(ctx.app, { sku: given.sku, qty: pcOf(15) }),
      ]);

      expect([picked.status, allocated.status]).toEqual([201, 200]);
      const elements = allocated.body as AllocationElement[];
      expect(elements.map((element) => element.qtyAllocated)).toEqual([pcOf(10)]);
      expect(await storedUnit(ctx, (picked.body as { pKey: string }).pKey)).toEqual(
        expect.objectContaining({ qty: '10', reserved: '10' }),
      );
      expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '20', reserved: '20', units: 2 });
    }
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('picks into a LoadUnit from where a move that committed while the pick waited for the unit put it', async () => {
    const given = await givenReservation(ctx, [5], 5);
    const unit = given.units[0]!;
    const movedTo = await givenTransportUnitOn(ctx.app, (await givenLocation(ctx.app)).locationId);
    await givenDivided(ctx.app, movedTo, 1);
    const pickedTo = unique('TU');
    const holder = await ctx.db.pool.connect();
    let answers;
    try {
      // The unit held by the test: the move queues for it, then the pick behind the move, its target locked.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM packaging_unit WHERE p_key = $1::uuid FOR UPDATE', [unit.pKey]);
      const moved = call(ctx.app, 'put', `/v1/packaging-units/${unit.pKey}`)
        .send({ loadUnit: { transportUnitBK: movedTo, physicalPosition: '1' } })
        .then((response) => response);
      const movePid = (await lockWaiter(ctx.db.pool, 'packaging_unit')).pid;
      const picked = pick(ctx, given.reservationId, {
        pKey: unit.pKey,
        qty: pcOf(2),
        target: { transportUnitBK: pickedTo, luPos: '1', loadUnitType: 'CRATE' },
      }).then((response) => response);
      await lockWaiter(ctx.db.pool, 'lock_pick_target_load_unit', [movePid]);
      await holder.query('COMMIT');
      answers = await Promise.all([moved, picked]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
    const [moved, picked] = answers;

    expectStatus(moved, 200, 'move');
    expectStatus(picked, 201, 'pick');
    const { rows } = await ctx.db.pool.query<{ from: unknown; to: unknown }>(
      'SELECT from_ref AS "from", to_ref AS "to" FROM stock_movement WHERE request_id = $1 ORDER BY id',
      [picked.headers['x-request-id']],
    );
    const path = {
      from: { transportUnitBK: movedTo, loadUnitPosition: '1' },
      to: { transportUnitBK: pickedTo, loadUnitPosition: '1' },
    };
    expect(rows).toEqual([path, path]);
    const source = (await eventsOf(ctx, picked)).find((event) => event.key === unit.pKey);
    expect(source?.resource).toEqual(
      expect.objectContaining({
        loadUnit: expect.objectContaining({ transportUnitBK: movedTo, physicalPosition: '1' }),
      }),
    );
  });
});
