import type { Test } from 'supertest';
import { describe, expect, it } from 'vitest';
import { getReservation, givenReservation, pcOf } from '../reservations/reservation-api.js';
import { expectApiDeclined } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { call, givenLocation, pc } from '../support/stock-api.js';

/**
 * D40: If-Match is honoured on every write of a resource that has an ETag: a stale tag is a 412 and changes
 * nothing, the current tag or `*` alone lets the write go ahead, and a malformed header is a 400 naming it.
 */
const ctx = useTestApp();

/** One write of one resource: where its tag is read, the write, and what the write changes, read back. */
interface Case {
  readonly tagAt: string;
  /** The key the 412 names. */
  readonly key: string;
  readonly write: () => Test;
  readonly success: number;
  readonly state: () => Promise<unknown>;
}

const stored = async (sql: string, values: unknown[]): Promise<unknown> => (await ctx.db.pool.query(sql, values)).rows;

/** A reservation of 4 PC of a unit of 6, with a Location to pick to. */
async function reservationCase(
  write: (id: string, unitPKey: string, locationId: string) => Test,
  success: number,
): Promise<Case> {
  const given = await givenReservation(ctx, [6], 4);
  const { locationId } = await givenLocation(ctx.app);
  return {
    tagAt: `/allocation/reservations/${given.reservationId}`,
    key: given.reservationId,
    write: () => write(given.reservationId, given.units[0]!.pKey, locationId),
    success,
    state: async () => getReservation(ctx, given.reservationId),
  };
}

/** A LoadUnit holding a unit of 3 PC (with its Product), and the unit itself. */
async function loadUnitAndUnit(): Promise<{ sku: string; loadUnit: string; unit: string }> {
  const given = await givenReservation(ctx, [6, 3], 1);
  await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`).expect(204);
  return { sku: given.sku, loadUnit: given.units[0]!.loadUnit!.pKey, unit: given.units[1]!.pKey };
}

const CASES: Record<string, () => Promise<Case>> = {
  'PUT /v1/products': async () => {
    const { sku } = await loadUnitAndUnit();
    const read = await call(ctx.app, 'get', `/v1/products?sku=${sku}`);
    const product = read.body as { pKey: string };
    return {
      tagAt: `/v1/products/${product.pKey}`,
      key: product.pKey,
      write: () => call(ctx.app, 'put', '/v1/products').send({ ...product, _links: undefined, label: 'changed' }),
      success: 200,
      state: () => stored('SELECT ol, label FROM product WHERE p_key = $1', [product.pKey]),
    };
  },
  'DELETE /v1/products/{pKey}': async () => {
    const sku = `PRE-${Math.random().toString(36).slice(2, 10)}`;
    await call(ctx.app, 'post', '/v1/products')
      .send([{ sku, baseUnit: pc(1) }])
      .expect(201);
    const pKey = ((await call(ctx.app, 'get', `/v1/products?sku=${sku}`)).body as { pKey: string }).pKey;
    return {
      tagAt: `/v1/products/${pKey}`,
      key: pKey,
      write: () => call(ctx.app, 'delete', `/v1/products/${pKey}`),
      success: 204,
      state: () => stored('SELECT ol FROM product WHERE p_key = $1', [pKey]),
    };
  },
  'PUT /v1/load-units/{pKey}': async () => {
    const { sku, loadUnit } = await loadUnitAndUnit();
    // Arranged directly: a LoadUnit without an assigned Product, which the PUT then assigns.
    await ctx.db.pool.query('UPDATE load_unit SET product_id = NULL WHERE p_key = $1', [loadUnit]);
    return {
      tagAt: `/v1/load-units/${loadUnit}`,
      key: loadUnit,
      write: () => call(ctx.app, 'put', `/v1/load-units/${loadUnit}`).send({ sku, baseUnit: pc(1) }),
      success: 200,
      state: () => stored('SELECT ol, product_id FROM load_unit WHERE p_key = $1', [loadUnit]),
    };
  },
  'PATCH /v1/load-units/{pKey}': async () => {
    const { loadUnit } = await loadUnitAndUnit();
    return {
      tagAt: `/v1/load-units/${loadUnit}`,
      key: loadUnit,
      write: () => call(ctx.app, 'patch', `/v1/load-units/${loadUnit}`).send({ locked: true }),
      success: 200,
      state: () => stored('SELECT ol, locked FROM load_unit WHERE p_key = $1', [loadUnit]),
    };
  },
  'PUT /v1/packaging-units/{pKey}': async () => {
    const { unit } = await loadUnitAndUnit();
    const { locationId } = await givenLocation(ctx.app);
    return {
      tagAt: `/v1/packaging-units/${unit}`,
      key: unit,
      write: () => call(ctx.app, 'put', `/v1/packaging-units/${unit}`).send({ actualLocation: { locationId } }),
      success: 200,
      state: () => stored('SELECT ol, location_id FROM packaging_unit WHERE p_key = $1', [unit]),
    };
  },
  'DELETE /v1/packaging-units/{pKey}': async () => {
    const { unit } = await loadUnitAndUnit();
    return {
      tagAt: `/v1/packaging-units/${unit}`,
      key: unit,
      write: () => call(ctx.app, 'delete', `/v1/packaging-units/${unit}`),
      success: 204,
      state: () => stored('SELECT ol FROM packaging_unit WHERE p_key = $1', [unit]),
    };
  },
  'POST /allocation/reservations/{id}/picks': () =>
    reservationCase(
      (id, pKey, locationId) =>
        call(ctx.app, 'post', `/allocation/reservations/${id}/picks`).send({
          pKey,
          qty: pcOf(1),
          target: { locationId },
        }),
      201,
    ),
  'POST /allocation/reservations/{id}/issue': () =>
    reservationCase((id) => call(ctx.app, 'post', `/allocation/reservations/${id}/issue`), 204),
  'DELETE /allocation/reservations/{id}': () =>
    reservationCase((id) => call(ctx.app, 'delete', `/allocation/reservations/${id}`), 204),
};

async function tagOf(given: Case): Promise<string> {
  const read = await call(ctx.app, 'get', given.tagAt);
  expect(read.status).toBe(200);
  return read.headers.etag!;
}

describe.each(Object.keys(CASES))('If-Match on %s', (operation) => {
  it('answers 412 to a stale tag and 400 to a malformed header, changing nothing; goes ahead on the current tag', async () => {
    const given = await CASES[operation]!();
    const tag = await tagOf(given);
    const before = await given.state();
    const stale = tag.replace(/^"[^.]*\./, `"${given.key}.stale.`);

    const refused = await given.write().set('If-Match', stale);
    expectApiDeclined(refused, {
      status: 412,
      message: `The resource [${given.key}] has changed since the tag in If-Match was read; read it again`,
      messageKey: 'owms.wms.inv.preconditionFailed',
      obj: [given.key],
      class: 'String',
    });
    for (const malformed of ['"stale*', '"x", *', '*, *', 'no-quotes', '']) {
      const response = await given.write().set('If-Match', malformed);
      expect([malformed, response.status, response.body.messageKey, response.body.obj]).toEqual([
        malformed,
        400,
        'core.validation.error',
        ['If-Match'],
      ]);
    }
    expect(await given.state()).toEqual(before);

    const done = await given.write().set('If-Match', `"other", ${tag}`);
    expect(done.status).toBe(given.success);
    expect(await given.state()).not.toEqual(before);
  });

  it('goes ahead on * alone, whatever the tag', async () => {
    const given = await CASES[operation]!();
    const before = await given.state();
    const done = await given.write().set('If-Match', '*');
    expect(done.status).toBe(given.success);
    expect(await given.state()).not.toEqual(before);
  });
});

describe('If-None-Match on a read', () => {
  it('answers 400 naming the header when it is malformed, and 304 only to * alone or a listed tag', async () => {
    const given = await CASES['DELETE /v1/products/{pKey}']!();
    const tag = await tagOf(given);
    const malformed = await call(ctx.app, 'get', given.tagAt).set('If-None-Match', '"x", *');
    const any = await call(ctx.app, 'get', given.tagAt).set('If-None-Match', '*');
    const listed = await call(ctx.app, 'get', given.tagAt).set('If-None-Match', `"x", W/${tag}`);
    expect([malformed.status, malformed.body.obj]).toEqual([400, ['If-None-Match']]);
    expect([any.status, listed.status]).toEqual([304, 304]);
  });
});
