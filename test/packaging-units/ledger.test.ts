import { describe, expect, it } from 'vitest';
import { expectApiDeclined } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenReserved,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  STOCK_BASE,
  stockApi,
  storedUnitsOf,
  TIMESTAMP,
  uniqueKey,
} from '../support/stock.js';
import { ledgerViolations } from '../support/stock-invariants.js';
import { signToken } from '../support/tokens.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const alice = stockApi(ctx, signToken({ sub: 'alice' }));
const bob = stockApi(ctx, signToken({ sub: 'bob' }));

function row(
  type: string,
  before: number,
  after: number,
  places: { from?: object; to?: object },
  actor: string,
  requestId: unknown,
  code = 'PC',
): Record<string, unknown> {
  return {
    type,
    quantityBefore: aQuantity(before, code),
    quantityAfter: aQuantity(after, code),
    reservedBefore: aQuantity(0, code),
    reservedAfter: aQuantity(0, code),
    ...places,
    actor,
    requestId,
    occurredAt: expect.stringMatching(TIMESTAMP),
  };
}

describe('GET /v1/packaging-units/{pKey}/movements (D24)', () => {
  it('lists one row per change, newest first, in the smallest unit, with actor and request id', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const { locationId } = await givenLocation(ctx);
    const created = await alice
      .post(`/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`, [aUnit(product.sku, 2, 'DOZ')])
      .set('X-Request-Id', 'req-create-1');
    const [unit] = created.body as { pKey: string }[];
    const moved = await bob.put(`/v1/packaging-units/${unit!.pKey}`, {
      quantity: aQuantity(5),
      actualLocation: { locationId },
    });
    expect(moved.status).toBe(200);
    const splitKey = (moved.body as { pKey: string }).pKey;
    const movedId = String(moved.headers['x-request-id']);
    const lu = { transportUnitBK: bk, loadUnitPosition: '1' };

    const response = await api.get(`/v1/packaging-units/${unit!.pKey}/movements`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(created.headers['x-request-id']).toBe('req-create-1');
    expect(response.body).toEqual([
      row('SPLIT', 24, 19, { from: lu, to: { locationId } }, 'bob', movedId),
      row('CREATE', 0, 24, { to: lu }, 'alice', 'req-create-1'),
    ]);
    expect(Object.keys(response.body[1])).toEqual([
      'type',
      'quantityBefore',
      'quantityAfter',
      'reservedBefore',
      'reservedAfter',
      'to',
      'actor',
      'requestId',
      'occurredAt',
    ]);
    expect((await api.get(`/v1/packaging-units/${splitKey}/movements`)).body).toEqual([
      row('SPLIT', 0, 5, { from: lu, to: { locationId } }, 'bob', movedId),
    ]);
  });

  it('records a reservation with its reservationId and a Weight unit in MG', async () => {
    const product = await givenProduct(ctx, { baseUnit: aQuantity(1, 'KG') });
    const bk = uniqueKey('TU');
    const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 1.5, 'KG')]);
    const [allocation] = await givenReserved(ctx, product.sku, 500, 'G');

    const response = await api.get(`/v1/packaging-units/${unit!.pKey}/movements`);

    expect(response.body).toEqual([
      {
        type: 'RESERVE',
        quantityBefore: aQuantity(1500000, 'MG'),
        quantityAfter: aQuantity(1500000, 'MG'),
        reservedBefore: aQuantity(0, 'MG'),
        reservedAfter: aQuantity(500000, 'MG'),
        from: { transportUnitBK: bk, loadUnitPosition: '1' },
        to: { transportUnitBK: bk, loadUnitPosition: '1' },
        reservationId: allocation!.reservationId,
        actor: 'test-user',
        requestId: expect.any(String),
        occurredAt: expect.stringMatching(TIMESTAMP),
      },
      row(
        'CREATE',
        0,
        1500000,
        { to: { transportUnitBK: bk, loadUnitPosition: '1' } },
        'test-user',
        expect.any(String),
        'MG',
      ),
    ]);
  });

  it('keeps the history of a deleted unit', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, locationId, 3);
    const deleted = await alice.del(`/v1/packaging-units/${unit.pKey}`);
    expect(deleted.status).toBe(204);

    const response = await api.get(`/v1/packaging-units/${unit.pKey}/movements`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      row('DELETE', 3, 0, { from: { locationId } }, 'alice', String(deleted.headers['x-request-id'])),
      row('CREATE', 0, 3, { to: { locationId } }, 'test-user', expect.any(String)),
    ]);
  });

  it('answers a page at a time, newest first, with a Link header to the next page (issue 15)', async () => {
    const product = await givenProduct(ctx);
    const [a, b] = [await givenLocation(ctx), await givenLocation(ctx)];
    const unit = await givenUnitOnLocation(ctx, product.sku, a.locationId, 3);
    for (const place of [b, a, b, a]) {
      const moved = await api.put(`/v1/packaging-units/${unit.pKey}`, {
        quantity: aQuantity(3),
        actualLocation: { locationId: place.locationId },
      });
      expect(moved.status).toBe(200);
    }
    const whole = (await api.get(`/v1/packaging-units/${unit.pKey}/movements`)).body as unknown[];
    expect(whole).toHaveLength(5);

    const pages: unknown[][] = [];
    let next: string | undefined = `/v1/packaging-units/${unit.pKey}/movements?limit=2`;
    while (next !== undefined) {
      const response = await api.get(next);
      expect(response.status).toBe(200);
      pages.push(response.body as unknown[]);
      const link = /^<([^>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1];
      next = link?.replace(STOCK_BASE, '');
    }

    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(whole);
  });

  it('answers an empty page after the last row of an existing unit, not 404', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const unit = await givenUnitOnLocation(ctx, product.sku, locationId, 3);
    const { rows } = await ctx.db.pool.query<{ id: string }>(
      'SELECT min(id)::text AS id FROM stock_movement WHERE packaging_unit_pkey = $1::uuid',
      [unit.pKey],
    );

    const response = await api.get(`/v1/packaging-units/${unit.pKey}/movements?after=${rows[0]!.id}`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it.each([['4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a004'], ['not-a-key']])(
    'answers 404 owms.wms.inv.pu.pKeyNotExists for the never-seen key %s',
    async (pKey) => {
      expectApiDeclined(await api.get(`/v1/packaging-units/${pKey}/movements`), {
        status: 404,
        message: `No PackagingUnit with pKey [${pKey}] exists`,
        messageKey: 'owms.wms.inv.pu.pKeyNotExists',
        obj: [pKey],
        class: 'String',
      });
    },
  );
});

describe('the stock_movement ledger', () => {
  it('refuses UPDATE and DELETE', async () => {
    const product = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    await givenUnitOnLocation(ctx, product.sku, locationId, 1);

    await expect(ctx.db.pool.query("UPDATE stock_movement SET actor = 'mallory'")).rejects.toMatchObject({
      code: '42501',
      message: 'stock_movement is append-only',
    });
    await expect(ctx.db.pool.query('DELETE FROM stock_movement')).rejects.toMatchObject({
      code: '42501',
      message: 'stock_movement is append-only',
    });
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM stock_movement WHERE actor = 'mallory'",
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('ends every unit’s history at its current quantity after creates, moves, splits, locks and deletes', async () => {
    const product = await givenProduct(ctx);
    const a = await givenLocation(ctx);
    const b = await givenLocation(ctx);
    const source = uniqueKey('TU');
    const target = uniqueKey('TU');
    const [first] = await givenUnitsInLoadUnit(ctx, source, '1', [
      aUnit(product.sku, 2, 'DOZ'),
      aUnit(product.sku, 10),
    ]);
    const [atTarget] = await givenUnitsInLoadUnit(ctx, target, '1', [aUnit(product.sku, 1)]);
    await givenUnitOnLocation(ctx, product.sku, a.locationId, 7);
    await givenReserved(ctx, product.sku, 3);
    const steps: [string, string, unknown][] = [
      [
        'PUT',
        `/v1/packaging-units/${first!.pKey}`,
        { quantity: aQuantity(5), actualLocation: { locationId: a.locationId } },
      ],
      [
        'PUT',
        `/v1/transport-units/${source}/load-units/1/packaging-units`,
        {
          product: { sku: product.sku },
          quantity: aQuantity(4),
          targetTransportUnitBK: target,
          targetLoadUnitPosition: '1',
        },
      ],
      [
        'POST',
        `/v1/transport-units/${target}/load-units/1/packaging-units/failures`,
        {
          product: { sku: product.sku },
          quantity: aQuantity(2),
        },
      ],
      [
        'PUT',
        '/v1/packaging-units/move-between-locations',
        [
          {
            product: { sku: product.sku },
            quantity: aQuantity(9),
            actualLocation: { locationId: a.locationId },
            targetLocation: { locationId: b.locationId },
          },
        ],
      ],
      [
        'PUT',
        '/v1/packaging-units/move-to-load-unit',
        {
          product: { sku: product.sku },
          quantity: aQuantity(2),
          targetTransportUnitBK: target,
          targetLoadUnitPosition: '1',
          actualLocation: { erpCode: b.erpCode },
        },
      ],
      [
        'DELETE',
        '/v1/packaging-units',
        { product: { sku: product.sku }, actualLocation: { locationId: b.locationId }, quantity: aQuantity(1) },
      ],
      ['DELETE', `/v1/packaging-units/${atTarget!.pKey}`, undefined],
    ];
    for (const [method, path, body] of steps) {
      const send =
        method === 'PUT' ? api.put(path, body) : method === 'POST' ? api.post(path, body) : api.del(path, body);
      const response = await send;
      expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
    }

    expect((await storedUnitsOf(ctx.db.pool, product.sku)).length).toBeGreaterThan(4);
    expect(await ledgerViolations(ctx.db.pool)).toEqual([]);
  });
});
