import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku } from '../support/builders.js';
import { outboxProbe, pc, type EventCase } from '../support/outbox.js';
import {
  aUnit,
  givenDivided,
  givenLocation,
  givenProduct,
  givenReserved,
  loadUnitPKey,
  uniqueKey,
} from '../support/stock.js';
import { catalogCases } from './outbox-catalog-cases.js';
import { createPath, unitCases } from './outbox-unit-cases.js';

const ctx = useTestApp();
const probe = outboxProbe(ctx);
const { api } = probe;
const catalog = catalogCases(ctx, probe);
const units = unitCases(ctx, probe);

describe('the transactional outbox (D27)', () => {
  describe.each([
    ['Products', catalog.products],
    ['LoadUnits', catalog.loadUnits],
    ['PackagingUnit creation', units.create],
    ['moves', units.moves],
    ['PackagingUnit changes', units.changes],
    ['allocation', catalog.allocation],
  ])('%s', (_feature, cases) => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, { arrange }) => {
      const { send, status, expected } = await arrange();

      const { requestId, response, events } = await probe.sendTracked(send);

      expect(response.status, response.text).toBe(status);
      const wanted = await expected(response);
      expect(events.map((row) => [row.type, row.key])).toEqual(wanted.map((e) => [e.type, e.key]));
      for (const row of events) expect(row.requestId).toBe(requestId);
      for (const [index, row] of events.entries()) await probe.expectResource(row, wanted[index]!);
    });
  });

  it('a bulk create of 6,001 Products is one event per Product, in request order', async () => {
    const products = Array.from({ length: 6_001 }, () => aProduct({ label: 'Bulk' }));

    const { requestId, response, events } = await probe.sendTracked(() => api.post('/v1/products', products));

    expect(response.status).toBe(201);
    const { rows } = await ctx.db.pool.query<{ sku: string; p_key: string }>(
      'SELECT sku, p_key FROM product WHERE sku = ANY($1::text[])',
      [products.map((product) => product.sku)],
    );
    const pKeys = new Map(rows.map((row) => [row.sku, row.p_key]));
    expect(events.map((row) => [row.type, row.key])).toEqual(
      products.map((product) => ['product.event.created', pKeys.get(product.sku)]),
    );
    expect(new Set(events.map((row) => row.requestId))).toEqual(new Set([requestId]));
    for (const row of [events[0]!, events[5_000]!, events.at(-1)!]) {
      await probe.expectResource(row, { type: row.type, key: row.key });
    }
  });

  it('10,000 units created into a new LoadUnit: its event, then one per unit in order, and a ledger row each', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const body = { packagingUnits: Array.from({ length: 10_000 }, () => aUnit(product.sku, 1)) };

    const { requestId, response, events } = await probe.sendTracked(() => api.post(createPath(bk), body));

    expect(response.status).toBe(201);
    const created = (response.body as { pKey: string }[]).map((unit) => unit.pKey);
    // One statement takes 10,000 events with the ledger rows; the 10,001st follows in a statement of its own.
    expect(events.map((row) => [row.type, row.key])).toEqual([
      ['lu.event.created', await loadUnitPKey(ctx.db.pool, bk, '1')],
      ...created.map((key) => ['pu.event.created', key]),
    ]);
    expect(new Set(events.map((row) => row.requestId))).toEqual(new Set([requestId]));
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM stock_movement WHERE packaging_unit_pkey = ANY($1::uuid[]) AND kind = 'CREATE'`,
      [created],
    );
    expect(Number(rows[0]!.n)).toBe(10_000);
  }, 60_000);

  it('an event keeps a NUL character of the resource, which PostgreSQL text cannot hold', async () => {
    const product = aProduct({ details: { 'key\u0000': 'value\u0000' } });

    const { response, events } = await probe.sendTracked(() => api.post('/v1/products', [product]));

    expect(response.status, response.text).toBe(201);
    expect(events).toHaveLength(1);
    expect(events[0]!.resource.details).toEqual({ 'key\u0000': 'value\u0000' });
    await probe.expectResource(events[0]!, { type: 'product.event.created', key: events[0]!.key });
  });
});

const rejections: EventCase[] = [
  {
    name: 'a bulk create naming one SKU twice (409)',
    async arrange() {
      const sku = uniqueSku();
      const body = [aProduct(), aProduct({ sku }), aProduct({ sku })];
      return { send: () => api.post('/v1/products', body), status: 409, expected: () => [] };
    },
  },
  {
    name: 'a bulk create with one SKU already stored (409)',
    async arrange() {
      const stored = await givenProduct(ctx);
      const body = [aProduct(), aProduct({ sku: stored.sku })];
      return { send: () => api.post('/v1/products', body), status: 409, expected: () => [] };
    },
  },
  {
    name: 'a Product update with a stale ol (409)',
    async arrange() {
      const product = await givenProduct(ctx);
      const body = { pKey: product.pKey, sku: product.sku, baseUnit: pc(1), ol: 7 };
      return { send: () => api.put('/v1/products', body), status: 409, expected: () => [] };
    },
  },
  {
    name: 'the deletion of a Product still in use (403)',
    async arrange() {
      const product = await givenProduct(ctx);
      await probe.givenLoadUnitWith(product.sku, [1]);
      return { send: () => api.del(`/v1/products/${product.pKey}`), status: 403, expected: () => [] };
    },
  },
  {
    name: 'a divide of a TransportUnit already divided (409)',
    async arrange() {
      const bk = uniqueKey('TU');
      await givenDivided(ctx, bk, 2);
      const body = { transportUnitBK: bk, loadUnitType: 'BOX', parts: 3 };
      return { send: () => api.post('/v1/transport-unit', body), status: 409, expected: () => [] };
    },
  },
  {
    name: 'putting another Product into an assigned LoadUnit (400)',
    async arrange() {
      const [held, other] = [await givenProduct(ctx), await givenProduct(ctx)];
      const { lu } = await probe.givenLoadUnitWith(held.sku, [1]);
      const body = { sku: other.sku, baseUnit: pc(1) };
      return { send: () => api.put(`/v1/load-units/${lu}`, body), status: 400, expected: () => [] };
    },
  },
  {
    name: 'units of an unknown SKU created into a missing LoadUnit (404)',
    async arrange() {
      const body = [aUnit(uniqueSku('NONE'), 1)];
      return { send: () => api.post(createPath(uniqueKey('TU')), body), status: 404, expected: () => [] };
    },
  },
  {
    name: 'a move of an unknown unit (404)',
    async arrange() {
      const target = await givenLocation(ctx);
      const body = { actualLocation: { locationId: target.locationId } };
      const unknown = '00000000-0000-4000-8000-000000000000';
      return { send: () => api.put(`/v1/packaging-units/${unknown}`, body), status: 404, expected: () => [] };
    },
  },
  {
    name: 'an over-allocation with allowPartial=false (409)',
    async arrange() {
      const product = await givenProduct(ctx);
      await probe.givenLoadUnitWith(product.sku, [2]);
      const body = { sku: product.sku, qty: pc(3) };
      return {
        send: () => api.post('/allocation/transport-units?allowPartial=false', body),
        status: 409,
        expected: () => [],
      };
    },
  },
  {
    name: 'the deletion of a reserved unit (409)',
    async arrange() {
      const product = await givenProduct(ctx);
      const { units } = await probe.givenLoadUnitWith(product.sku, [2]);
      await givenReserved(ctx, product.sku, 1);
      return { send: () => api.del(`/v1/packaging-units/${units[0]}`), status: 409, expected: () => [] };
    },
  },
  {
    name: 'the release of an unknown reservation (404)',
    async arrange() {
      const unknown = '00000000-0000-4000-8000-000000000001';
      return { send: () => api.del(`/allocation/reservations/${unknown}`), status: 404, expected: () => [] };
    },
  },
];

describe('a rejected request writes no event', () => {
  it.each(rejections.map((c) => [c.name, c] as const))('%s', async (_name, { arrange }) => {
    const { send, status } = await arrange();

    const { response, events } = await probe.sendTracked(send);

    expect(response.status, response.text).toBe(status);
    expect(events).toEqual([]);
  });
});
