import { describe, expect, it } from 'vitest';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8, UUID } from '../support/http.js';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  givenLoadUnitLocked,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  givenUnitsOnLocation,
  pc,
  qtyAvailableOf,
  type AllocationElement,
} from '../support/stock-api.js';
import { totalsOf } from '../support/stock-invariants.js';

/** D23: which units an allocation takes, in which order, and how it answers. */
const ctx = useTestApp();

const RESULT_KEYS = ['transportUnitBK', 'loadUnitPosition', 'sku', 'actualErpCode', 'qtyAllocated', 'reservationId'];

/** A new TransportUnit on a new Location; answers both keys. */
async function aTransportUnit(): Promise<{ bk: string; erpCode: string }> {
  const location = await givenLocation(ctx.app);
  return { bk: await givenTransportUnitOn(ctx.app, location.locationId), erpCode: location.erpCode! };
}

const byPlace = (a: AllocationElement, b: AllocationElement): number =>
  `${a.transportUnitBK}/${a.loadUnitPosition}`.localeCompare(`${b.transportUnitBK}/${b.loadUnitPosition}`);

async function allocated(body: unknown): Promise<AllocationElement[]> {
  const response = await allocate(ctx.app, body);
  expect({ status: response.status, type: response.headers['content-type'] }).toEqual({ status: 200, type: JSON_UTF8 });
  return response.body as AllocationElement[];
}

describe('POST /allocation/transport-units', () => {
  it('takes the earliest expiry first, answers one element per LoadUnit and one reservation id', async () => {
    const sku = await givenProduct(ctx.app);
    const first = await aTransportUnit();
    const second = await aTransportUnit();
    const [a, b] = await givenUnitsIn(ctx.app, first.bk, '1', sku, [
      { quantity: pc(5), expiresAt: '2030-01-01T00:00:00.000Z' },
      { quantity: pc(5) },
    ]);
    const [c] = await givenUnitsIn(ctx.app, second.bk, '1', sku, [
      { quantity: pc(4), expiresAt: '2029-06-01T00:00:00.000Z' },
    ]);
    const [d] = await givenUnitsIn(ctx.app, first.bk, '2', sku, [
      { quantity: pc(3), expiresAt: '2031-01-01T00:00:00+02:00' },
    ]);

    const body = await allocated({ sku, qty: pc(14) });

    const reservationId = body[0]!.reservationId;
    expect(reservationId).toMatch(UUID);
    expect([...body].sort(byPlace)).toEqual(
      [
        { transportUnitBK: second.bk, loadUnitPosition: '1', sku, actualErpCode: second.erpCode, qtyAllocated: pc(4) },
        // a (2030) whole and 2 of b (no expiry): one element for the LoadUnit, summed
        { transportUnitBK: first.bk, loadUnitPosition: '1', sku, actualErpCode: first.erpCode, qtyAllocated: pc(7) },
        { transportUnitBK: first.bk, loadUnitPosition: '2', sku, actualErpCode: first.erpCode, qtyAllocated: pc(3) },
      ]
        .map((element) => ({ ...element, reservationId }))
        .sort(byPlace),
    );
    for (const element of body) expect(Object.keys(element)).toEqual(RESULT_KEYS);
    const available = await Promise.all([a, b, c, d].map((unit) => qtyAvailableOf(ctx.app, unit!.pKey)));
    expect(available).toEqual([pc(0), pc(3), pc(0), pc(0)]);
  });

  it('takes the oldest unit first among units of equal expiry (FIFO)', async () => {
    const sku = await givenProduct(ctx.app);
    const older = await aTransportUnit();
    const newer = await aTransportUnit();
    await givenUnitsIn(ctx.app, older.bk, '1', sku, [{ quantity: pc(5) }]);
    await givenUnitsIn(ctx.app, newer.bk, '1', sku, [{ quantity: pc(5) }]);

    const body = await allocated({ sku, qty: pc(6) });

    expect(body.map((e) => [e.transportUnitBK, e.qtyAllocated]).sort()).toEqual(
      [
        [older.bk, pc(5)],
        [newer.bk, pc(1)],
      ].sort(),
    );
  });

  it('takes a unit with an expiry before an older unit without one (no expiry last)', async () => {
    const sku = await givenProduct(ctx.app);
    const withoutExpiry = await aTransportUnit();
    const withExpiry = await aTransportUnit();
    await givenUnitsIn(ctx.app, withoutExpiry.bk, '1', sku, [{ quantity: pc(5) }]);
    await givenUnitsIn(ctx.app, withExpiry.bk, '1', sku, [{ quantity: pc(5), expiresAt: '2099-12-31T00:00:00Z' }]);

    const body = await allocated({ sku, qty: pc(2) });

    expect(body).toEqual([expect.objectContaining({ transportUnitBK: withExpiry.bk, qtyAllocated: pc(2) })]);
  });

  it('never allocates units lying loose on a Location', async () => {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    await givenUnitsOnLocation(ctx.app, location.locationId, sku, [{ quantity: pc(100) }]);
    expect(await allocated({ sku, qty: pc(10) })).toEqual([]);

    const tu = await aTransportUnit();
    await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: pc(2) }]);
    expect(await allocated({ sku, qty: pc(10) })).toEqual([
      expect.objectContaining({ transportUnitBK: tu.bk, qtyAllocated: pc(2) }),
    ]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '102', reserved: '2', units: 2 });
  });

  it.each(['LOCKED', 'QC_LOCKED'])('allocates nothing of a %s Product', async (availabilityState) => {
    const sku = await givenProduct(ctx.app, { availabilityState });
    const tu = await aTransportUnit();
    await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: pc(10) }]);

    expect(await allocated({ sku, qty: pc(1) })).toEqual([]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '10', reserved: '0', units: 1 });
  });

  it('skips units that are not AVAILABLE', async () => {
    const sku = await givenProduct(ctx.app);
    const tu = await aTransportUnit();
    await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: pc(5) }]);
    const report = { messageNo: '42', messageText: 'damaged', product: { sku }, quantity: pc(3) };
    const path = `/v1/transport-units/${tu.bk}/load-units/1/packaging-units/failures`;
    expect((await call(ctx.app, 'post', path).send(report)).status).toBe(204);

    expect(await allocated({ sku, qty: pc(5) })).toEqual([expect.objectContaining({ qtyAllocated: pc(2) })]);
  });

  it('skips LoadUnits locked for allocation', async () => {
    const sku = await givenProduct(ctx.app);
    const locked = await aTransportUnit();
    const open = await aTransportUnit();
    const [inLocked] = await givenUnitsIn(ctx.app, locked.bk, '1', sku, [{ quantity: pc(5) }]);
    await givenUnitsIn(ctx.app, open.bk, '1', sku, [{ quantity: pc(5) }]);
    await givenLoadUnitLocked(ctx.app, inLocked!.loadUnit!.pKey);

    expect(await allocated({ sku, qty: pc(8) })).toEqual([
      expect.objectContaining({ transportUnitBK: open.bk, qtyAllocated: pc(5) }),
    ]);
    expect(await qtyAvailableOf(ctx.app, inLocked!.pKey)).toEqual(pc(5));
  });

  it('skips fully reserved units and gives every request its own reservation id', async () => {
    const sku = await givenProduct(ctx.app);
    const older = await aTransportUnit();
    const newer = await aTransportUnit();
    await givenUnitsIn(ctx.app, older.bk, '1', sku, [{ quantity: pc(5) }]);
    await givenUnitsIn(ctx.app, newer.bk, '1', sku, [{ quantity: pc(5) }]);

    const [first] = await allocated({ sku, qty: pc(5) });
    const [second] = await allocated({ sku, qty: pc(3) });

    expect(first).toEqual(expect.objectContaining({ transportUnitBK: older.bk, qtyAllocated: pc(5) }));
    expect(second).toEqual(expect.objectContaining({ transportUnitBK: newer.bk, qtyAllocated: pc(3) }));
    expect(second!.reservationId).not.toBe(first!.reservationId);
  });

  it('allocates what there is when stock is short, and [] when nothing is left', async () => {
    const sku = await givenProduct(ctx.app);
    const tu = await aTransportUnit();
    await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: pc(12) }]);

    expect(await allocated({ sku, qty: pc(30) })).toEqual([expect.objectContaining({ qtyAllocated: pc(12) })]);
    expect(await allocated({ sku, qty: pc(30) })).toEqual([]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '12', reserved: '12', units: 1 });
  });

  it('answers qtyAllocated in the requested unit when whole, else in the base unit', async () => {
    const sku = await givenProduct(ctx.app);
    const tu = await aTransportUnit();
    const [unit] = await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: pc(31) }]);

    expect(await allocated({ sku, qty: aQuantity(2, 'DOZ') })).toEqual([
      expect.objectContaining({ qtyAllocated: aQuantity(2, 'DOZ') }),
    ]);
    expect(await qtyAvailableOf(ctx.app, unit!.pKey)).toEqual(pc(7));
    expect(await allocated({ sku, qty: aQuantity(1, 'DOZ') })).toEqual([
      expect.objectContaining({ qtyAllocated: pc(7) }),
    ]);
    expect(await qtyAvailableOf(ctx.app, unit!.pKey)).toEqual(pc(0));
  });

  it('answers weights in the requested unit when whole, else in the base unit', async () => {
    const sku = await givenProduct(ctx.app, { baseUnit: aQuantity(1, 'G') });
    const tu = await aTransportUnit();
    const [unit] = await givenUnitsIn(ctx.app, tu.bk, '1', sku, [{ quantity: aQuantity(1.5, 'KG') }]);

    expect(await allocated({ sku, qty: aQuantity(1, 'KG') })).toEqual([
      expect.objectContaining({ qtyAllocated: aQuantity(1, 'KG') }),
    ]);
    expect(await allocated({ sku, qty: aQuantity(1, 'KG') })).toEqual([
      expect.objectContaining({ qtyAllocated: aQuantity(500, 'G') }),
    ]);
    expect(await totalsOf(ctx.db.pool, sku)).toEqual({ qty: '1500000', reserved: '1500000', units: 1 });
    expect((await qtyAvailableOf(ctx.app, unit!.pKey)).magnitude).toBe(0);
  });
});
