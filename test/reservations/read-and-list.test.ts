import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import { allocate, call, givenProduct, HOST } from '../support/stock-api.js';
import { expectIsoInstant, getReservation, givenReservation, pcOf, type ReservationJson } from './reservation-api.js';

/** D32: externalRef and expiresAt on allocation, a reservation read and listed. */
const ctx = useTestApp();

const inAnHour = (): string => new Date(Date.now() + 3_600_000).toISOString();

describe('a reservation after allocation', () => {
  it('is read with its reference, expiry, state and the units it holds, linked from the allocation answer', async () => {
    const expiresAt = inAnHour();
    const given = await givenReservation(ctx, [3, 10], 5, { externalRef: 'order-1/line-2', expiresAt });
    const allocation = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), externalRef: 'order-1/line-3' });
    expect(allocation.headers.link).toBe(
      `<http://${HOST}/allocation/reservations/${(allocation.body as { reservationId: string }[])[0]!.reservationId}>; rel="reservation"`,
    );

    const response = await call(ctx.app, 'get', `/allocation/reservations/${given.reservationId}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const body = response.body as ReservationJson;
    expectIsoInstant(body.createdAt);
    expect(body).toEqual({
      reservationId: given.reservationId,
      sku: given.sku,
      qty: pcOf(5),
      picked: pcOf(0),
      state: 'ACTIVE',
      externalRef: 'order-1/line-2',
      createdAt: body.createdAt,
      expiresAt,
      units: [
        { pKey: given.units[0]!.pKey, qty: pcOf(3), picked: pcOf(0) },
        { pKey: given.units[1]!.pKey, qty: pcOf(2), picked: pcOf(0) },
      ],
      _links: { self: { href: `http://${HOST}/allocation/reservations/${given.reservationId}` } },
    });
    expect(Object.keys(body)).toEqual([
      'reservationId',
      'sku',
      'qty',
      'picked',
      'state',
      'externalRef',
      'createdAt',
      'expiresAt',
      'units',
      '_links',
    ]);
  });

  it('leaves out externalRef, expiresAt and endedAt when there are none, and shows endedAt once released', async () => {
    const given = await givenReservation(ctx, [4], 4);
    expect(Object.keys(await getReservation(ctx, given.reservationId))).not.toContain('externalRef');
    expect((await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`)).status).toBe(204);

    const released = await getReservation(ctx, given.reservationId);

    expect(released.state).toBe('RELEASED');
    expectIsoInstant(released.endedAt);
    expect(Object.keys(released)).toEqual([
      'reservationId',
      'sku',
      'qty',
      'picked',
      'state',
      'createdAt',
      'endedAt',
      'units',
      '_links',
    ]);
    expect(released.units).toEqual([{ pKey: given.units[0]!.pKey, qty: pcOf(4), picked: pcOf(0) }]);
  });

  it('answers 404 owms.wms.inv.res.notFound for an unknown or malformed id', async () => {
    for (const id of ['3f1c2a52-8f0e-4d7e-9a51-0c3f5d2b9e11', 'not-a-uuid']) {
      expectApiDeclined(await call(ctx.app, 'get', `/allocation/reservations/${id}`), {
        status: 404,
        message: `No reservation [${id}] was ever issued`,
        messageKey: 'owms.wms.inv.res.notFound',
        obj: [id],
        class: 'String',
      });
    }
  });

  it('refuses an expiresAt in the past, more than a year ahead, malformed or without offset, and reserves nothing', async () => {
    const given = await givenReservation(ctx, [5], 1);
    const farAhead = new Date(Date.now() + 367 * 24 * 3_600_000).toISOString();
    const cases: [unknown, string][] = [
      [new Date(Date.now() - 1000).toISOString(), 'must be in the future and at most a year ahead'],
      [farAhead, 'must be in the future and at most a year ahead'],
      ['tomorrow', 'must be an ISO 8601 datetime with an offset'],
      ['2030-01-01T10:00:00', 'must be an ISO 8601 datetime with an offset'],
      [1_900_000_000_000, 'must be of type string'],
    ];
    for (const [expiresAt, message] of cases) {
      const response = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), expiresAt });
      expectValidationError(response, [['expiresAt', message]]);
    }
    expect((await getReservation(ctx, given.reservationId)).qty).toEqual(pcOf(1));
    const { rows } = await ctx.db.pool.query(
      'SELECT count(*)::int AS n FROM reservation_life r JOIN product p ON p.id = r.product_id WHERE p.sku = $1',
      [given.sku],
    );
    expect(rows[0].n).toBe(1);
  });

  it('refuses an externalRef that is empty, blank or over 255 characters', async () => {
    const given = await givenReservation(ctx, [5], 1);
    const cases: [string, string][] = [
      ['', 'must not be blank'],
      ['   ', 'must not be blank'],
      ['x'.repeat(256), 'Too big: expected string to have <=255 characters'],
    ];
    for (const [externalRef, message] of cases) {
      const response = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), externalRef });
      expectValidationError(response, [['externalRef', message]]);
    }
    const ok = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), externalRef: 'x'.repeat(255) });
    expect(ok.status).toBe(200);
  });
});

describe('the reservation list', () => {
  it('lists newest first, filtered by sku, externalRef and state, a page at a time with Link and HAL next', async () => {
    const given = await givenReservation(ctx, [100], 1, { externalRef: 'A' });
    const ids = [given.reservationId];
    for (const externalRef of ['B', 'A', 'A']) {
      const response = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), externalRef });
      ids.push((response.body as { reservationId: string }[])[0]!.reservationId);
    }
    expect((await call(ctx.app, 'delete', `/allocation/reservations/${ids[3]}`)).status).toBe(204);

    const all = await call(ctx.app, 'get', `/allocation/reservations?sku=${given.sku}`);
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe(JSON_UTF8);
    expect((all.body as ReservationJson[]).map((r) => r.reservationId)).toEqual([...ids].reverse());
    expect(all.headers.link).toBeUndefined();

    const activeA = await call(ctx.app, 'get', `/allocation/reservations?sku=${given.sku}&externalRef=A&state=ACTIVE`);
    expect((activeA.body as ReservationJson[]).map((r) => r.reservationId)).toEqual([ids[2], ids[0]]);

    const first = await call(ctx.app, 'get', `/allocation/reservations?sku=${given.sku}&externalRef=A&limit=2`);
    expect((first.body as ReservationJson[]).map((r) => r.reservationId)).toEqual([ids[3], ids[2]]);
    const next = /^<(.+)>; rel="next"$/.exec(first.headers.link as string)![1]!;
    expect(next).toMatch(
      new RegExp(`^http://${HOST}/allocation/reservations\\?sku=${given.sku}&externalRef=A&limit=2&after=\\d+$`),
    );
    const second = await call(ctx.app, 'get', next.replace(`http://${HOST}`, ''));
    expect((second.body as ReservationJson[]).map((r) => r.reservationId)).toEqual([ids[0]]);
    expect(second.headers.link).toBeUndefined();

    const hal = await call(ctx.app, 'get', `/allocation/reservations?sku=${given.sku}&externalRef=A&limit=2`).set(
      'Accept',
      'application/hal+json',
    );
    expect(hal.headers['content-type']).toBe(HAL_JSON_UTF8);
    const halBody = hal.body as { _embedded: { reservations: ReservationJson[] }; _links: Record<string, unknown> };
    expect(halBody._embedded.reservations.map((r) => r._links!.self.href)).toEqual(
      [ids[3], ids[2]].map((id) => `http://${HOST}/allocation/reservations/${id}`),
    );
    expect(halBody._links.next).toEqual({ href: next });
  });

  it('answers an empty list for a SKU without reservations and 400 for an unknown state or bad limit', async () => {
    const sku = await givenProduct(ctx.app);
    const empty = await call(ctx.app, 'get', `/allocation/reservations?sku=${sku}`);
    expect([empty.status, empty.body]).toEqual([200, []]);
    expectValidationError(await call(ctx.app, 'get', '/allocation/reservations?state=GONE'), [
      ['state', 'Invalid option: expected one of "ACTIVE"|"RELEASED"|"EXPIRED"|"ISSUED"'],
    ]);
    expectValidationError(await call(ctx.app, 'get', '/allocation/reservations?limit=1001'), [
      ['limit', 'Too big: expected number to be <=1000'],
    ]);
  });

  it('is reachable from /index through reservations-index', async () => {
    const root = await call(ctx.app, 'get', '/index');
    const indexHref = (root.body as { _links: Record<string, { href: string }> })._links['reservations-index']!.href;
    expect(indexHref).toBe(`http://${HOST}/allocation/reservations/index`);
    const index = await call(ctx.app, 'get', '/allocation/reservations/index');
    expect(index.status).toBe(200);
    expect(Object.keys((index.body as { _links: object })._links)).toEqual([
      'allocate',
      'reservations-findall',
      'reservations-findbyid',
      'reservations-pick',
      'reservations-issue',
      'release-reservation',
      'self',
    ]);
  });
});
