import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { HAL_JSON_UTF8 } from '../support/http.js';
import { call, givenLocation, HOST, unique } from '../support/stock-api.js';
import { allViolations } from '../support/stock-invariants.js';
import {
  eventsOf,
  getReservation,
  givenReservation,
  issue,
  ledgerOf,
  pcOf,
  pick,
  storedUnit,
} from './reservation-api.js';

/** D32: picking reserved goods and goods issue, ledger rows and events included. */
const ctx = useTestApp();

const eventKinds = (events: { type: string; key: string }[]): [string, string][] =>
  events.map((event) => [event.type, event.key]);

async function changeCount(): Promise<{ ledger: number; events: number }> {
  const { rows } = await ctx.db.pool.query(
    'SELECT (SELECT count(*) FROM stock_movement)::int AS ledger, (SELECT count(*) FROM event_outbox)::int AS events',
  );
  return rows[0];
}

describe('picking a reservation', () => {
  it('splits a partial pick off to the target, still reserved by the reservation, with PICK rows and events', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const [whole, partly] = given.units.map((unit) => unit.pKey);
    const target = await givenLocation(ctx.app);

    const response = await pick(ctx, given.reservationId, {
      pKey: partly,
      qty: pcOf(1),
      target: { locationId: target.locationId },
    });

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const picked = response.body as { pKey: string; quantity: unknown; qtyAvailable: unknown };
    expect(response.headers.location).toBe(`http://${HOST}/v1/packaging-units/${picked.pKey}`);
    expect(picked.pKey).not.toBe(partly);
    expect([picked.quantity, picked.qtyAvailable]).toEqual([pcOf(1), pcOf(0)]);
    expect(await storedUnit(ctx, partly!)).toEqual(expect.objectContaining({ qty: '9', reserved: '1' }));
    expect(await storedUnit(ctx, picked.pKey)).toEqual(
      expect.objectContaining({ qty: '1', reserved: '1', loadUnitId: null }),
    );
    expect(await ledgerOf(ctx, response)).toEqual([
      { pKey: partly, kind: 'PICK', qtyBefore: '10', qtyAfter: '9', reservedBefore: '2', reservedAfter: '1' },
      { pKey: picked.pKey, kind: 'PICK', qtyBefore: '0', qtyAfter: '1', reservedBefore: '0', reservedAfter: '1' },
    ]);
    const events = await eventsOf(ctx, response);
    expect(eventKinds(events)).toEqual([
      ['pu.event.changed', partly],
      ['pu.event.created', picked.pKey],
      ['allocation.event.picked', given.reservationId],
    ]);
    expect(events[2]!.resource).toEqual({
      reservationId: given.reservationId,
      sku: given.sku,
      qty: pcOf(1),
      units: [{ pKey: picked.pKey, qty: pcOf(1) }],
    });
    const reservation = await getReservation(ctx, given.reservationId);
    expect([reservation.qty, reservation.picked, reservation.units]).toEqual([
      pcOf(5),
      pcOf(1),
      [
        { pKey: whole, qty: pcOf(3), picked: pcOf(0) },
        { pKey: partly, qty: pcOf(1), picked: pcOf(0) },
        { pKey: picked.pKey, qty: pcOf(1), picked: pcOf(1) },
      ],
    ]);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('moves a unit the reservation holds whole into a LoadUnit created on the spot', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const whole = given.units[0]!.pKey;
    const bk = unique('TRUCK');

    const response = await pick(ctx, given.reservationId, {
      pKey: whole,
      qty: pcOf(3),
      target: { transportUnitBK: bk, luPos: '1', loadUnitType: 'CRATE' },
    });

    expect(response.status).toBe(201);
    expect((response.body as { pKey: string }).pKey).toBe(whole);
    expect((response.body as { loadUnit: { transportUnitBK: string } }).loadUnit.transportUnitBK).toBe(bk);
    expect(await ledgerOf(ctx, response)).toEqual([
      { pKey: whole, kind: 'PICK', qtyBefore: '3', qtyAfter: '3', reservedBefore: '3', reservedAfter: '3' },
    ]);
    const events = await eventsOf(ctx, response);
    expect(eventKinds(events).map(([type]) => type)).toEqual([
      'lu.event.created',
      'pu.event.moved',
      'allocation.event.picked',
    ]);
    expect((await getReservation(ctx, given.reservationId)).units[0]).toEqual({
      pKey: whole,
      qty: pcOf(3),
      picked: pcOf(3),
    });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('refuses bad picks with a clear error and changes nothing', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const other = await givenReservation(ctx, [4], 4);
    const [whole, partly] = given.units.map((unit) => unit.pKey);
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    const before = await changeCount();
    const id = given.reservationId;

    expectValidationError(await pick(ctx, id, { pKey: partly, qty: pcOf(0), target }), [
      ['qty.magnitude', 'must be greater than 0'],
    ]);
    expectValidationError(await pick(ctx, id, { pKey: partly, qty: pcOf(-1), target }), [
      ['qty.magnitude', 'must be greater than 0'],
    ]);
    expectValidationError(await pick(ctx, id, { pKey: partly, qty: aQuantity(1, 'KG'), target }), [
      ['qty', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    expectValidationError(await pick(ctx, id, { pKey: partly, qty: pcOf(1) }), [['target', 'Invalid input']]);
    expectApiDeclined(await pick(ctx, id, { pKey: partly, qty: pcOf(3), target }), {
      status: 409,
      message: `Reservation [${id}] holds 2 PC on PackagingUnit [${partly}], 3 PC were to be picked`,
      messageKey: 'owms.wms.inv.res.overpick',
      obj: [id, partly, '3 PC', '2 PC'],
      class: 'String',
    });
    const foreign = other.units[0]!.pKey;
    expectApiDeclined(await pick(ctx, id, { pKey: foreign, qty: pcOf(1), target }), {
      status: 409,
      message: `Reservation [${id}] holds 0 PC on PackagingUnit [${foreign}], 1 PC were to be picked`,
      messageKey: 'owms.wms.inv.res.overpick',
      obj: [id, foreign, '1 PC', '0 PC'],
      class: 'String',
    });
    const unknown = randomUUID();
    expectApiDeclined(await pick(ctx, unknown, { pKey: partly, qty: pcOf(1), target }), {
      status: 404,
      message: `No reservation [${unknown}] was ever issued`,
      messageKey: 'owms.wms.inv.res.notFound',
      obj: [unknown],
      class: 'String',
    });
    const nowhere = await pick(ctx, id, { pKey: whole, qty: pcOf(1), target: { locationId: 'NO-SUCH-LOC' } });
    expect([nowhere.status, (nowhere.body as { messageKey: string }).messageKey]).toEqual([
      404,
      'owms.wms.inv.loc.idNotExists',
    ]);
    const inPlace = await pick(ctx, id, {
      pKey: whole,
      qty: pcOf(1),
      target: { transportUnitBK: given.bk, luPos: '1' },
    });
    expectValidationError(inPlace, [['target', 'is where the stock already is']]);
    const noType = await pick(ctx, id, {
      pKey: whole,
      qty: pcOf(1),
      target: { transportUnitBK: unique('TU'), luPos: '1' },
    });
    expect([noType.status, (noType.body as { messageKey: string }).messageKey]).toEqual([
      400,
      'owms.wms.inv.pu.loadUnitTypeMissing',
    ]);

    expect(await changeCount()).toEqual(before);
    expect((await getReservation(ctx, id)).picked).toEqual(pcOf(0));
  });

  it('answers a retried pick with the same Idempotency-Key from the first answer and picks once', async () => {
    const given = await givenReservation(ctx, [10], 6);
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    const key = unique('pick');
    const send = () =>
      pick(ctx, given.reservationId, { pKey: given.units[0]!.pKey, qty: pcOf(2), target }).set('Idempotency-Key', key);

    const first = await send();
    const retry = await send();

    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect((await getReservation(ctx, given.reservationId)).picked).toEqual(pcOf(2));
  });
});

describe('goods issue', () => {
  it('takes what the reservation holds out of stock, deletes emptied units, and answers 204 again', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const [whole, partly] = given.units.map((unit) => unit.pKey);
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    const picked = (await pick(ctx, given.reservationId, { pKey: partly, qty: pcOf(1), target })).body as {
      pKey: string;
    };

    const response = await issue(ctx, given.reservationId).set('Idempotency-Key', unique('issue'));

    expect(response.status).toBe(204);
    expect(await storedUnit(ctx, whole!)).toBeUndefined();
    expect(await storedUnit(ctx, picked.pKey)).toBeUndefined();
    expect(await storedUnit(ctx, partly!)).toEqual(expect.objectContaining({ qty: '8', reserved: '0' }));
    expect(await ledgerOf(ctx, response)).toEqual([
      { pKey: whole, kind: 'ISSUE', qtyBefore: '3', qtyAfter: '0', reservedBefore: '3', reservedAfter: '0' },
      { pKey: partly, kind: 'ISSUE', qtyBefore: '9', qtyAfter: '8', reservedBefore: '1', reservedAfter: '0' },
      { pKey: picked.pKey, kind: 'ISSUE', qtyBefore: '1', qtyAfter: '0', reservedBefore: '1', reservedAfter: '0' },
    ]);
    const events = await eventsOf(ctx, response);
    expect(eventKinds(events)).toEqual([
      ['allocation.event.issued', given.reservationId],
      ['pu.event.deleted', whole],
      ['pu.event.changed', partly],
      ['pu.event.deleted', picked.pKey],
    ]);
    expect(events[0]!.resource).toEqual({
      reservationId: given.reservationId,
      sku: given.sku,
      qty: pcOf(5),
      units: [
        { pKey: whole, qty: pcOf(3) },
        { pKey: partly, qty: pcOf(1) },
        { pKey: picked.pKey, qty: pcOf(1) },
      ],
    });
    const issued = await getReservation(ctx, given.reservationId);
    expect([issued.state, issued.picked, issued.units.map((unit) => unit.pKey)]).toEqual([
      'ISSUED',
      pcOf(1),
      [whole, partly, picked.pKey],
    ]);
    expect(await allViolations(ctx.db.pool)).toEqual([]);

    const before = await changeCount();
    expect((await issue(ctx, given.reservationId)).status).toBe(204);
    expect((await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`)).status).toBe(204);
    expect(await changeCount()).toEqual(before);
    expect((await getReservation(ctx, given.reservationId)).state).toBe('ISSUED');
    expectApiDeclined(await pick(ctx, given.reservationId, { pKey: partly, qty: pcOf(1), target }), {
      status: 409,
      message: `Reservation [${given.reservationId}] is ISSUED, not ACTIVE`,
      messageKey: 'owms.wms.inv.res.notActive',
      obj: [given.reservationId, 'ISSUED'],
      class: 'String',
    });
  });

  it('answers a retried issue with the same Idempotency-Key from the first answer', async () => {
    const given = await givenReservation(ctx, [8], 3);
    const key = unique('issue');

    const first = await issue(ctx, given.reservationId).set('Idempotency-Key', key);
    const retry = await issue(ctx, given.reservationId).set('Idempotency-Key', key);

    expect([first.status, retry.status]).toEqual([204, 204]);
    expect([first.headers['idempotent-replayed'], retry.headers['idempotent-replayed']]).toEqual([undefined, 'true']);
    expect(await storedUnit(ctx, given.units[0]!.pKey)).toEqual(expect.objectContaining({ qty: '5', reserved: '0' }));
  });

  it('answers 409 notActive for a released reservation and 404 for an unknown one', async () => {
    const given = await givenReservation(ctx, [3], 3);
    expect((await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`)).status).toBe(204);
    expectApiDeclined(await issue(ctx, given.reservationId), {
      status: 409,
      message: `Reservation [${given.reservationId}] is RELEASED, not ACTIVE`,
      messageKey: 'owms.wms.inv.res.notActive',
      obj: [given.reservationId, 'RELEASED'],
      class: 'String',
    });
    expect((await issue(ctx, 'nope')).status).toBe(404);
    expect(await storedUnit(ctx, given.units[0]!.pKey)).toEqual(expect.objectContaining({ qty: '3', reserved: '0' }));
  });
});

describe('release after picks', () => {
  it('leaves the picked goods unreserved where they were picked to', async () => {
    const given = await givenReservation(ctx, [10], 4);
    const target = await givenLocation(ctx.app);
    const picked = (
      await pick(ctx, given.reservationId, {
        pKey: given.units[0]!.pKey,
        qty: pcOf(3),
        target: { locationId: target.locationId },
      })
    ).body as { pKey: string };

    const response = await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`);

    expect(response.status).toBe(204);
    expect(await storedUnit(ctx, picked.pKey)).toEqual(expect.objectContaining({ qty: '3', reserved: '0' }));
    expect(await storedUnit(ctx, given.units[0]!.pKey)).toEqual(expect.objectContaining({ qty: '7', reserved: '0' }));
    expect(
      (await ledgerOf(ctx, response)).map((row) => [row.pKey, row.kind, row.reservedBefore, row.reservedAfter]),
    ).toEqual([
      [given.units[0]!.pKey, 'RELEASE', '1', '0'],
      [picked.pKey, 'RELEASE', '3', '0'],
    ]);
    const released = await getReservation(ctx, given.reservationId);
    expect([released.state, released.picked]).toEqual(['RELEASED', pcOf(3)]);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });
});

describe('stock levels through a reservation’s life', () => {
  interface Level {
    onHand: unknown;
    reserved: unknown;
    available?: unknown;
    asOf: string;
  }
  const levelOf = async (sku: string, at?: string): Promise<Level> => {
    const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}${at ? `&at=${encodeURIComponent(at)}` : ''}`);
    expect(response.status).toBe(200);
    return response.body as Level;
  };

  it('count picked goods as reserved until issued, now and at past instants replayed from the ledger', async () => {
    const given = await givenReservation(ctx, [10], 4);
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    const beforePick = await levelOf(given.sku);
    expect((await pick(ctx, given.reservationId, { pKey: given.units[0]!.pKey, qty: pcOf(3), target })).status).toBe(
      201,
    );
    const picked = await levelOf(given.sku);
    expect(await issue(ctx, given.reservationId).then((r) => r.status)).toBe(204);
    const issued = await levelOf(given.sku);

    expect([beforePick.onHand, beforePick.reserved, beforePick.available]).toEqual([pcOf(10), pcOf(4), pcOf(6)]);
    expect([picked.onHand, picked.reserved, picked.available]).toEqual([pcOf(10), pcOf(4), pcOf(6)]);
    expect([issued.onHand, issued.reserved, issued.available]).toEqual([pcOf(6), pcOf(0), pcOf(6)]);
    const atPick = await levelOf(given.sku, picked.asOf);
    expect([atPick.onHand, atPick.reserved]).toEqual([pcOf(10), pcOf(4)]);
  });
});

describe('the Product of an ended reservation', () => {
  it('answers 403 with the D13 message while an issued reservation of it is kept, and keeps the Product', async () => {
    const given = await givenReservation(ctx, [3], 3);
    expect((await issue(ctx, given.reservationId)).status).toBe(204);
    // Arranged directly: the emptied LoadUnit no longer assigned to the Product, so only the reservation refers to it.
    await ctx.db.pool.query(
      'UPDATE load_unit SET product_id = NULL WHERE product_id = (SELECT id FROM product WHERE sku = $1)',
      [given.sku],
    );
    const product = await call(ctx.app, 'get', `/v1/products?sku=${given.sku}`).set('Accept', 'application/json');
    const pKey = (product.body as { pKey: string }).pKey;

    const response = await call(ctx.app, 'delete', `/v1/products/${pKey}`);

    expect([response.status, response.body]).toEqual([
      403,
      { message: `Product [${given.sku}] cannot be deleted: it is still used by reservations` },
    ]);
    expect((await getReservation(ctx, given.reservationId)).sku).toBe(given.sku);
  });
});
