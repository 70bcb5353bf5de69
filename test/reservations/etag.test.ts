import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import { call, givenLocation } from '../support/stock-api.js';
import { givenReservation, issue, pcOf, pick, type ReservationJson } from './reservation-api.js';

/** D33's validators on GET /allocation/reservations/{id}, like the other single resources. */
const ctx = useTestApp();
const HAL = 'application/hal+json';
const JSON_TYPE = 'application/json';

const reservationPath = (reservationId: string): string => `/allocation/reservations/${reservationId}`;

function read(reservationId: string, accept = HAL, ifNoneMatch?: string) {
  const get = call(ctx.app, 'get', reservationPath(reservationId)).set('Accept', accept);
  return ifNoneMatch === undefined ? get : get.set('If-None-Match', ifNoneMatch);
}

async function tagOf(reservationId: string): Promise<string> {
  const response = await read(reservationId);
  expect(response.status).toBe(200);
  return response.headers.etag!;
}

/** The id of the reservation's newest part, as stored. */
async function newestPartId(reservationId: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ id: number }>(
    'SELECT max(id)::int AS id FROM reservation WHERE reservation_id = $1::uuid',
    [reservationId],
  );
  return rows[0]!.id;
}

async function productOl(sku: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ ol: number }>('SELECT ol FROM product WHERE sku = $1', [sku]);
  return rows[0]!.ol;
}

/** The old tag no longer matches: the new body with a new tag. */
async function expectChangedSince(reservationId: string, before: readonly string[]): Promise<string> {
  const response = await read(reservationId, HAL, before.at(-1));
  expect(response.status).toBe(200);
  expect(before).not.toContain(response.headers.etag);
  expect((response.body as ReservationJson).reservationId).toBe(reservationId);
  return response.headers.etag!;
}

describe('ETag and If-None-Match on a reservation (D33)', () => {
  it('tags a reservation by its state, newest part, picked parts and Product, differently per media type', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const version = `${given.reservationId}.ACTIVE.${await newestPartId(given.reservationId)}.0.${await productOl(given.sku)}`;

    const hal = await read(given.reservationId, HAL);
    const plain = await read(given.reservationId, JSON_TYPE);

    expect(hal.status).toBe(200);
    expect(hal.headers.etag).toBe(`"${version}.hal-json"`);
    expect(plain.status).toBe(200);
    expect(plain.headers.etag).toBe(`"${version}.json"`);
    expect(plain.body).toEqual(hal.body);
  });

  it('answers 304 with the tag and no body to If-None-Match naming it, and 200 to the tag of the other media type', async () => {
    const given = await givenReservation(ctx, [4], 2);
    const tag = await tagOf(given.reservationId);

    const unchanged = await read(given.reservationId, HAL, tag);
    const otherType = await read(given.reservationId, JSON_TYPE, tag);

    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(tag);
    expect(otherType.status).toBe(200);
    expect(otherType.headers.etag).toBe(tag.replace('.hal-json"', '.json"'));
  });

  it('changes the tag with a split pick, a whole pick and the release, each time to one not seen before', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const [whole, partly] = given.units.map((unit) => unit.pKey);
    const { locationId } = await givenLocation(ctx.app);
    const tags = [await tagOf(given.reservationId)];

    const split = await pick(ctx, given.reservationId, { pKey: partly, qty: pcOf(1), target: { locationId } });
    expect(split.status).toBe(201);
    tags.push(await expectChangedSince(given.reservationId, tags));

    const wholeUnit = await pick(ctx, given.reservationId, { pKey: whole, qty: pcOf(3), target: { locationId } });
    expect(wholeUnit.status).toBe(201);
    expect((wholeUnit.body as { pKey: string }).pKey).toBe(whole);
    tags.push(await expectChangedSince(given.reservationId, tags));

    expect((await call(ctx.app, 'delete', reservationPath(given.reservationId))).status).toBe(204);
    tags.push(await expectChangedSince(given.reservationId, tags));

    expect((await read(given.reservationId, HAL, tags.at(-1))).status).toBe(304);
  });

  it('changes the tag when the reservation expires or is issued', async () => {
    const expiring = await givenReservation(ctx, [4], 2);
    const issued = await givenReservation(ctx, [4], 2);
    const before = [await tagOf(expiring.reservationId), await tagOf(issued.reservationId)];

    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE reservation_id = $1::uuid",
      [expiring.reservationId],
    );
    const actor = { subject: 'test', requestId: 'etag-test' };
    expect(await withTransaction(ctx.db.pool, (tx) => expireDue(tx, actor, 1))).toBe(1);
    expect((await issue(ctx, issued.reservationId)).status).toBe(204);

    const afterExpiry = await read(expiring.reservationId, HAL, before[0]);
    const afterIssue = await read(issued.reservationId, HAL, before[1]);

    expect([afterExpiry.status, (afterExpiry.body as ReservationJson).state]).toEqual([200, 'EXPIRED']);
    expect(afterExpiry.headers.etag).toBe(before[0]!.replace('.ACTIVE.', '.EXPIRED.'));
    expect([afterIssue.status, (afterIssue.body as ReservationJson).state]).toEqual([200, 'ISSUED']);
    expect(afterIssue.headers.etag).toBe(before[1]!.replace('.ACTIVE.', '.ISSUED.'));
  });

  it('changes the tag when its Product changes, whose SKU and base unit it shows', async () => {
    const given = await givenReservation(ctx, [4], 2);
    const before = await tagOf(given.reservationId);
    const product = await call(ctx.app, 'get', `/v1/products?sku=${given.sku}`).set('Accept', JSON_TYPE);
    const { _links: _ignored, ...fields } = product.body as Record<string, unknown>;
    const renamed = await call(ctx.app, 'put', '/v1/products').send({ ...fields, sku: `${given.sku}-R` });
    expect(renamed.status).toBe(200);

    const after = await read(given.reservationId, HAL, before);

    expect(after.status).toBe(200);
    expect((after.body as ReservationJson).sku).toBe(`${given.sku}-R`);
    expect(after.headers.etag).not.toBe(before);
  });

  it('answers 404 owms.wms.inv.res.notFound without a tag for an unknown id', async () => {
    const response = await read('00000000-0000-4000-8000-000000000000', HAL, '*');

    expect(response.status).toBe(404);
    expect(response.headers.etag).toBeUndefined();
    expect((response.body as { messageKey: string }).messageKey).toBe('owms.wms.inv.res.notFound');
  });
});
