import { describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/tx.js';
import { EXPIRY_ACTOR, expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import { lockWaiter } from '../support/pg-activity.js';
import { call, givenLocation } from '../support/stock-api.js';
import { getReservation, givenReservation, pcOf, pick } from './reservation-api.js';

/**
 * D40: a writer of units does not wait for the expiry work. A reservation past its expiry that holds the goods a
 * move, a deletion or a problem report wants is ended first, in the writer's transaction, as the expiry work ends
 * it: EXPIRE ledger rows and one allocation.event.expired, exactly once. The expiry work does not run in the test
 * app, so only the writer can have ended it.
 */
const ctx = useTestApp();

interface DueReservation {
  sku: string;
  bk: string;
  pKey: string;
  reservationId: string;
}

/** Arranged directly, as the API takes no expiry in the past. */
async function makeDue(reservationId: string): Promise<void> {
  await ctx.db.pool.query(
    `UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE reservation_id = $1`,
    [reservationId],
  );
}

/** A reservation of the whole of one unit of 5 PC in LoadUnit 1, past its expiry since a second. */
async function givenDueReservationOfOneUnit(): Promise<DueReservation> {
  const given = await givenReservation(ctx, [5], 5, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
  await makeDue(given.reservationId);
  return { sku: given.sku, bk: given.bk, pKey: given.units[0]!.pKey, reservationId: given.reservationId };
}

/** As above, but the goods were picked whole onto a Location first: the unit lies there, still reserved. */
async function givenDueReservationOnLocation(): Promise<DueReservation & { locationId: string }> {
  const given = await givenReservation(ctx, [5], 5, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
  const { locationId } = await givenLocation(ctx.app);
  const picked = await pick(ctx, given.reservationId, {
    pKey: given.units[0]!.pKey,
    qty: pcOf(5),
    target: { locationId },
  });
  expect(picked.status).toBe(201);
  await makeDue(given.reservationId);
  return { sku: given.sku, bk: given.bk, pKey: given.units[0]!.pKey, reservationId: given.reservationId, locationId };
}

/** How the reservation ended, as stored, and its EXPIRE ledger rows and expired events. */
async function endingOf(reservationId: string): Promise<{ state: string; ledger: number; events: number }> {
  const { rows } = await ctx.db.pool.query<{ state: string; ledger: number; events: number }>(
    `SELECT (SELECT state FROM reservation_life WHERE reservation_id = $1::uuid) AS state,
            (SELECT count(*)::int FROM stock_movement WHERE kind = 'EXPIRE' AND reservation_id = $1::uuid) AS ledger,
            (SELECT count(*)::int FROM event_outbox
              WHERE type = 'allocation.event.expired' AND resource_key = $1::text) AS events`,
    [reservationId],
  );
  return rows[0]!;
}

async function expectEndedOnceAsExpired(reservationId: string): Promise<void> {
  expect(await endingOf(reservationId)).toEqual({ state: 'EXPIRED', ledger: 1, events: 1 });
  expect((await getReservation(ctx, reservationId)).state).toBe('EXPIRED');
}

async function reservedOf(pKey: string): Promise<string | undefined> {
  const { rows } = await ctx.db.pool.query<{ reserved: string }>(
    `SELECT reserved_base::text AS reserved FROM packaging_unit WHERE p_key = $1::uuid`,
    [pKey],
  );
  return rows[0]?.reserved;
}

function moveOutOfLoadUnit(bk: string, sku: string, magnitude: number, locationId: string) {
  return call(ctx.app, 'put', `/v1/transport-units/${bk}/load-units/1/packaging-units`).send({
    product: { sku },
    quantity: pcOf(magnitude),
    actualLocation: { locationId },
  });
}

/** The Product's units as stored: in a LoadUnit or on a Location, their quantity and reserved amount. */
async function quantitiesOf(sku: string): Promise<{ where: string; magnitude: string; reserved: string }[]> {
  const { rows } = await ctx.db.pool.query<{ where: string; magnitude: string; reserved: string }>(
    `SELECT CASE WHEN u.load_unit_id IS NULL THEN 'location' ELSE 'load unit' END AS where,
            u.qty_base::text AS magnitude, u.reserved_base::text AS reserved
       FROM packaging_unit u JOIN product p ON p.id = u.product_id
      WHERE p.sku = $1 ORDER BY 1`,
    [sku],
  );
  return rows;
}

/** A unit of 5 PC of which a live reservation holds 3, moved whole (with its reservation) onto a Location. */
async function givenPartlyReservedUnitOnLocation(): Promise<{
  sku: string;
  reservationId: string;
  locationId: string;
}> {
  const given = await givenReservation(ctx, [5], 3, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
  const { locationId } = await givenLocation(ctx.app);
  const moved = await call(ctx.app, 'put', `/v1/packaging-units/${given.units[0]!.pKey}`).send({
    actualLocation: { locationId },
  });
  expect(moved.status).toBe(200);
  return { sku: given.sku, reservationId: given.reservationId, locationId };
}

function removeFromLocation(sku: string, magnitude: number, locationId: string) {
  return call(ctx.app, 'delete', '/v1/packaging-units').send({
    product: { sku },
    actualLocation: { locationId },
    quantity: pcOf(magnitude),
  });
}

describe('a writer meeting a reservation past its expiry that the expiry work has not ended yet', () => {
  it('moves all of a unit by quantity (PUT /v1/packaging-units/{pKey}): 200, the reservation expired once', async () => {
    const due = await givenDueReservationOfOneUnit();
    const target = await givenLocation(ctx.app);

    const moved = await call(ctx.app, 'put', `/v1/packaging-units/${due.pKey}`).send({
      quantity: pcOf(5),
      actualLocation: { locationId: target.locationId },
    });

    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ pKey: due.pKey, actualLocation: { locationId: target.locationId } });
    expect(await reservedOf(due.pKey)).toBe('0');
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('moves a quantity out of the LoadUnit onto a Location: 204, the reservation expired once', async () => {
    const due = await givenDueReservationOfOneUnit();
    const target = await givenLocation(ctx.app);

    const moved = await call(ctx.app, 'put', `/v1/transport-units/${due.bk}/load-units/1/packaging-units`).send({
      product: { sku: due.sku },
      quantity: pcOf(2),
      actualLocation: { locationId: target.locationId },
    });

    expect(moved.status).toBe(204);
    expect(await reservedOf(due.pKey)).toBe('0');
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('moves 4 PC of a unit of 5 of which a due reservation holds 3: 204, the reservation expired once', async () => {
    const given = await givenReservation(ctx, [5], 3, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await makeDue(given.reservationId);
    const target = await givenLocation(ctx.app);

    const moved = await moveOutOfLoadUnit(given.bk, given.sku, 4, target.locationId);

    expect(moved.status).toBe(204);
    expect(await quantitiesOf(given.sku)).toEqual([
      { where: 'load unit', magnitude: '1', reserved: '0' },
      { where: 'location', magnitude: '4', reserved: '0' },
    ]);
    await expectEndedOnceAsExpired(given.reservationId);
  });

  it('moves only the 2 free PC when a live reservation holds 3 of the 5 (D21), the reservation untouched', async () => {
    const given = await givenReservation(ctx, [5], 3, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const target = await givenLocation(ctx.app);

    const moved = await moveOutOfLoadUnit(given.bk, given.sku, 4, target.locationId);

    expect(moved.status).toBe(204);
    expect(await quantitiesOf(given.sku)).toEqual([
      { where: 'load unit', magnitude: '3', reserved: '3' },
      { where: 'location', magnitude: '2', reserved: '0' },
    ]);
    expect(await endingOf(given.reservationId)).toEqual({ state: 'ACTIVE', ledger: 0, events: 0 });
  });

  it('removes 4 PC of 5 on a Location of which a due reservation holds 3: 204, 1 PC left, expired once', async () => {
    const given = await givenPartlyReservedUnitOnLocation();
    await makeDue(given.reservationId);

    const removed = await removeFromLocation(given.sku, 4, given.locationId);

    expect(removed.status).toBe(204);
    expect(await quantitiesOf(given.sku)).toEqual([{ where: 'location', magnitude: '1', reserved: '0' }]);
    await expectEndedOnceAsExpired(given.reservationId);
  });

  it('refuses to remove 4 PC of 5 on a Location of which a live reservation holds 3 (409), changing nothing', async () => {
    const given = await givenPartlyReservedUnitOnLocation();

    const removed = await removeFromLocation(given.sku, 4, given.locationId);

    expect(removed.status).toBe(409);
    expect(removed.body).toMatchObject({ messageKey: 'owms.wms.inv.pu.reserved' });
    expect(await quantitiesOf(given.sku)).toEqual([{ where: 'location', magnitude: '5', reserved: '3' }]);
    expect(await endingOf(given.reservationId)).toEqual({ state: 'ACTIVE', ledger: 0, events: 0 });
  });

  it('deletes the unit (DELETE /v1/packaging-units/{pKey}): 204, the reservation expired once', async () => {
    const due = await givenDueReservationOfOneUnit();

    const deleted = await call(ctx.app, 'delete', `/v1/packaging-units/${due.pKey}`);

    expect(deleted.status).toBe(204);
    expect(await reservedOf(due.pKey)).toBeUndefined();
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('deletes the unit under the If-Match of the unit as read before the expiry ended: 204', async () => {
    const due = await givenDueReservationOfOneUnit();
    const read = await call(ctx.app, 'get', `/v1/packaging-units/${due.pKey}`);
    expect(read.status).toBe(200);

    const deleted = await call(ctx.app, 'delete', `/v1/packaging-units/${due.pKey}`).set(
      'If-Match',
      read.headers['etag'] as string,
    );

    expect(deleted.status).toBe(204);
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('removes the quantity from a Location (DELETE /v1/packaging-units): 204, the reservation expired once', async () => {
    const due = await givenDueReservationOnLocation();

    const removed = await removeFromLocation(due.sku, 5, due.locationId);

    expect(removed.status).toBe(204);
    expect(await reservedOf(due.pKey)).toBeUndefined();
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('moves a quantity between Locations: 204, the reservation expired once', async () => {
    const due = await givenDueReservationOnLocation();
    const target = await givenLocation(ctx.app);

    const moved = await call(ctx.app, 'put', '/v1/packaging-units/move-between-locations').send([
      {
        product: { sku: due.sku },
        quantity: pcOf(5),
        actualLocation: { locationId: due.locationId },
        targetLocation: { locationId: target.locationId },
      },
    ]);

    expect(moved.status).toBe(204);
    expect(await reservedOf(due.pKey)).toBe('0');
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('locks the goods on a problem report: 204, the reservation expired once', async () => {
    const due = await givenDueReservationOfOneUnit();

    const reported = await call(
      ctx.app,
      'post',
      `/v1/transport-units/${due.bk}/load-units/1/packaging-units/failures`,
    ).send({ messageNo: 'QC-1', messageText: 'damaged', product: { sku: due.sku }, quantity: pcOf(5) });

    expect(reported.status).toBe(204);
    const { rows } = await ctx.db.pool.query<{ state: string }>(
      'SELECT state FROM packaging_unit WHERE p_key = $1::uuid',
      [due.pKey],
    );
    expect(rows).toEqual([{ state: 'LOCKED' }]);
    await expectEndedOnceAsExpired(due.reservationId);
  });

  it('waits while the expiry work holds the reservation, then moves: ended once, by the expiry work', async () => {
    const due = await givenDueReservationOfOneUnit();
    const target = await givenLocation(ctx.app);
    const worker = (await ctx.db.pool.connect()) as Tx;
    try {
      await worker.query('BEGIN');
      expect(await expireDue(worker, { subject: EXPIRY_ACTOR, requestId: 'expiry-test' }, 1000)).toBe(1);
      const moving = Promise.resolve(
        call(ctx.app, 'put', `/v1/packaging-units/${due.pKey}`).send({
          quantity: pcOf(5),
          actualLocation: { locationId: target.locationId },
        }),
      );
      await lockWaiter(ctx.db.pool, 'WITH due AS MATERIALIZED');
      await worker.query('COMMIT');

      expect((await moving).status).toBe(200);
    } finally {
      worker.release();
    }
    await expectEndedOnceAsExpired(due.reservationId);
    const { rows } = await ctx.db.pool.query<{ requestId: string }>(
      `SELECT request_id AS "requestId" FROM stock_movement WHERE kind = 'EXPIRE' AND reservation_id = $1::uuid`,
      [due.reservationId],
    );
    expect(rows).toEqual([{ requestId: 'expiry-test' }]);
  });
});
