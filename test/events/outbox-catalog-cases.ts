import type { TestContext } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule, type Json } from '../support/builders.js';
import { event, pc, type EventCase, type Expected, type OutboxProbe } from '../support/outbox.js';
import { expectStatus } from '../support/stock-api.js';
import {
  aUnit,
  givenLoadUnitLocked,
  givenProduct,
  givenReserved,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  uniqueKey,
} from '../support/stock.js';

const reservation = (reservationId: string, sku: string, qty: number, units: [string, number][]): Json => ({
  reservationId,
  sku,
  qty: pc(qty),
  units: units.map(([pKey, amount]) => ({ pKey, qty: pc(amount) })),
});

/** A reservation's event, then a `pu.event.changed` of each unit it reserved or released from, in that order. */
const reservationEvents = (
  type: 'allocation.event.reserved' | 'allocation.event.released',
  reservationId: string,
  sku: string,
  units: [string, number][],
): Expected[] => [
  event(
    type,
    reservationId,
    reservation(
      reservationId,
      sku,
      units.reduce((sum, [, amount]) => sum + amount, 0),
      units,
    ),
  ),
  ...units.map(([pKey]) => event('pu.event.changed', pKey)),
];

/** D27 cases of Products, LoadUnits and reservations: each operation with the events it must write. */
export function catalogCases(
  ctx: TestContext,
  probe: OutboxProbe,
): { products: EventCase[]; loadUnits: EventCase[]; allocation: EventCase[] } {
  const { api } = probe;
  const productCases: EventCase[] = [
    {
      name: 'a Product created alone is one product.event.created',
      async arrange() {
        const product = aProduct({ label: 'Alone', units: [aProductUnit()] });
        return {
          send: () => api.post('/v1/products', product),
          status: 201,
          expected: async () => [event('product.event.created', await probe.productPKey(product.sku))],
        };
      },
    },
    {
      name: 'a bulk create of n Products is n product.event.created in request order',
      async arrange() {
        const [first, second, third] = [aProduct(), aProduct({ units: [aProductUnit()] }), aProduct()];
        const products = [first!, { ...second!, stackingRules: [aStackingRule(first!.sku, 2)] }, third!];
        return {
          send: () => api.post('/v1/products', products),
          status: 201,
          expected: async () =>
            Promise.all(products.map(async (p) => event('product.event.created', await probe.productPKey(p.sku)))),
        };
      },
    },
    {
      name: 'a Product update is one product.event.updated',
      async arrange() {
        const product = await givenProduct(ctx);
        const body = { pKey: product.pKey, sku: product.sku, baseUnit: pc(1), label: 'Renamed', ol: 0 };
        return {
          send: () => api.put('/v1/products', body),
          status: 200,
          expected: () => [event('product.event.updated', product.pKey)],
        };
      },
    },
    {
      name: 'a Product deletion is one product.event.deleted naming its pKey and SKU',
      async arrange() {
        const product = await givenProduct(ctx);
        return {
          send: () => api.del(`/v1/products/${product.pKey}`),
          status: 204,
          expected: () => [event('product.event.deleted', product.pKey, { pKey: product.pKey, sku: product.sku })],
        };
      },
    },
  ];

  const loadUnitCases: EventCase[] = [
    {
      name: 'a divide is one lu.event.created per new LoadUnit, by position',
      async arrange() {
        const bk = uniqueKey('TU');
        return {
          send: () => api.post('/v1/transport-unit', { transportUnitBK: bk, loadUnitType: 'BOX', parts: 3 }),
          status: 201,
          expected: async () =>
            Promise.all(
              ['1', '2', '3'].map(async (p) => event('lu.event.created', await loadUnitPKey(ctx.db.pool, bk, p))),
            ),
        };
      },
    },
    {
      name: 'a divide of a TransportUnit with one LoadUnit is an event of each position it adds only',
      async arrange() {
        const product = await givenProduct(ctx);
        const { bk } = await probe.givenLoadUnitWith(product.sku, [1]);
        return {
          send: () => api.post('/v1/transport-unit', { transportUnitBK: bk, loadUnitType: 'BOX', parts: 3 }),
          status: 201,
          expected: async () =>
            Promise.all(['2', '3'].map(async (p) => event('lu.event.created', await loadUnitPKey(ctx.db.pool, bk, p)))),
        };
      },
    },
    {
      name: 'putting a Product into a LoadUnit is one lu.event.changed',
      async arrange() {
        const product = await givenProduct(ctx);
        const { lu } = await probe.givenEmptyLoadUnit();
        return {
          send: () => api.put(`/v1/load-units/${lu}`, { sku: product.sku, baseUnit: pc(1) }),
          status: 200,
          expected: () => [event('lu.event.changed', lu)],
        };
      },
    },
    {
      name: 'putting the Product a LoadUnit already has into it changes nothing and writes no event',
      async arrange() {
        const product = await givenProduct(ctx);
        const { lu } = await probe.givenEmptyLoadUnit();
        const body = { sku: product.sku, baseUnit: pc(1) };
        expectStatus(await api.put(`/v1/load-units/${lu}`, body), 200, 'assign the product');
        return { send: () => api.put(`/v1/load-units/${lu}`, body), status: 200, expected: () => [] };
      },
    },
    {
      name: 'locking a LoadUnit is its lu.event.changed and a pu.event.changed of each unit in it',
      async arrange() {
        const product = await givenProduct(ctx);
        const { lu, units } = await probe.givenLoadUnitWith(product.sku, [2, 3]);
        return {
          send: () => api.patch(`/v1/load-units/${lu}`, { locked: true }),
          status: 200,
          expected: () => [
            event('lu.event.changed', lu),
            event('pu.event.changed', units[0]!),
            event('pu.event.changed', units[1]!),
          ],
        };
      },
    },
    {
      name: 'unlocking a LoadUnit is its lu.event.changed and a pu.event.changed of each unit in it',
      async arrange() {
        const product = await givenProduct(ctx);
        const { lu, units } = await probe.givenLoadUnitWith(product.sku, [2]);
        await givenLoadUnitLocked(ctx, lu);
        return {
          send: () => api.patch(`/v1/load-units/${lu}`, { locked: false }),
          status: 200,
          expected: () => [event('lu.event.changed', lu), event('pu.event.changed', units[0]!)],
        };
      },
    },
    {
      name: 'unlocking an unlocked LoadUnit changes nothing and writes no event',
      async arrange() {
        const product = await givenProduct(ctx);
        const { lu } = await probe.givenLoadUnitWith(product.sku, [2]);
        return { send: () => api.patch(`/v1/load-units/${lu}`, { locked: false }), status: 200, expected: () => [] };
      },
    },
  ];

  const allocationCases: EventCase[] = [
    {
      name: 'a reservation is allocation.event.reserved, then a pu.event.changed of each unit it reserves from',
      async arrange() {
        const product = await givenProduct(ctx);
        const { units } = await probe.givenLoadUnitWith(product.sku, [5, 5]);
        return {
          send: () => api.post('/allocation/transport-units', { sku: product.sku, qty: pc(7) }),
          status: 200,
          expected: (response) => {
            const [{ reservationId }] = response.body as [{ reservationId: string }];
            return reservationEvents('allocation.event.reserved', reservationId, product.sku, [
              [units[0]!, 5],
              [units[1]!, 2],
            ]);
          },
        };
      },
    },
    {
      name: 'a reservation renders a reserved unit as GET does, with every optional field and an earlier reservation',
      async arrange() {
        const product = await givenProduct(ctx, { label: 'Reserved twice' });
        const bk = uniqueKey('TU');
        const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [
          aUnit(product.sku, 6, 'PC', {
            serialNumber: 'SN-4711',
            expiresAt: '2030-05-01T12:30:15.5+02:00',
            labels: ['fragile', 'cold'],
            dimension: { height: 10, length: 20.5, width: 30 },
            weight: aQuantity(1250.5, 'G'),
            distribution: { piecesPerLayer: 4, numberOfLayers: 2, carrierType: 'EURO' },
            physicalPosition: 'front-left',
            details: { batch: 'B-7', grade: 'A' },
          }),
        ]);
        await givenReserved(ctx, product.sku, 2);
        return {
          send: () => api.post('/allocation/transport-units', { sku: product.sku, qty: pc(3) }),
          status: 200,
          expected: (response) => {
            const [{ reservationId }] = response.body as [{ reservationId: string }];
            return reservationEvents('allocation.event.reserved', reservationId, product.sku, [[unit!.pKey, 3]]);
          },
        };
      },
    },
    {
      name: 'a release is allocation.event.released, then a pu.event.changed of each unit it releases from',
      async arrange() {
        const product = await givenProduct(ctx);
        const { units } = await probe.givenLoadUnitWith(product.sku, [5, 5]);
        const [{ reservationId }] = (await givenReserved(ctx, product.sku, 7)) as [{ reservationId: string }];
        return {
          send: () => api.del(`/allocation/reservations/${reservationId}`),
          status: 204,
          expected: () =>
            reservationEvents('allocation.event.released', reservationId, product.sku, [
              [units[0]!, 5],
              [units[1]!, 2],
            ]),
        };
      },
    },
    {
      name: 'releasing a released reservation again changes nothing and writes no event',
      async arrange() {
        const product = await givenProduct(ctx);
        await probe.givenLoadUnitWith(product.sku, [5]);
        const [{ reservationId }] = (await givenReserved(ctx, product.sku, 2)) as [{ reservationId: string }];
        expectStatus(await api.del(`/allocation/reservations/${reservationId}`), 204, 'release');
        return { send: () => api.del(`/allocation/reservations/${reservationId}`), status: 204, expected: () => [] };
      },
    },
  ];

  return { products: productCases, loadUnits: loadUnitCases, allocation: allocationCases };
}
