import type { Response } from 'supertest';
import type { TestContext } from '../support/app.js';
import { event, pc, type EventCase, type OutboxProbe } from '../support/outbox.js';
import { expectStatus } from '../support/stock-api.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  givenUnitsOnLocation,
  loadUnitPKey,
  uniqueKey,
} from '../support/stock.js';

export const createPath = (bk: string, luPos = '1'): string =>
  `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units?loadUnitType=BOX`;
const createdKeys = (response: Response): string[] => (response.body as { pKey: string }[]).map((unit) => unit.pKey);

/** D27 cases of PackagingUnits: creation, every move shape and every change, with the events each must write. */
export function unitCases(
  ctx: TestContext,
  probe: OutboxProbe,
): { create: EventCase[]; moves: EventCase[]; changes: EventCase[] } {
  const { api } = probe;
  const createCases: EventCase[] = [
    {
      name: 'units created into a missing LoadUnit are its lu.event.created, then a pu.event.created each',
      async arrange() {
        const product = await givenProduct(ctx);
        const bk = uniqueKey('TU');
        const units = [aUnit(product.sku, 2), aUnit(product.sku, 3)];
        return {
          send: () => api.post(createPath(bk), { packagingUnits: units }),
          status: 201,
          expected: async (response) => [
            event('lu.event.created', await loadUnitPKey(ctx.db.pool, bk, '1')),
            ...createdKeys(response).map((key) => event('pu.event.created', key)),
          ],
        };
      },
    },
    {
      name: 'units created into an empty LoadUnit assign it their Product: lu.event.changed, then pu.event.created',
      async arrange() {
        const product = await givenProduct(ctx);
        const { bk, lu } = await probe.givenEmptyLoadUnit();
        return {
          send: () => api.post(createPath(bk), [aUnit(product.sku, 2)]),
          status: 201,
          expected: (response) => [
            event('lu.event.changed', lu),
            ...createdKeys(response).map((key) => event('pu.event.created', key)),
          ],
        };
      },
    },
    {
      name: 'units created into a LoadUnit holding their Product are a pu.event.created each',
      async arrange() {
        const product = await givenProduct(ctx);
        const { bk } = await probe.givenLoadUnitWith(product.sku, [1]);
        return {
          send: () => api.post(createPath(bk), [aUnit(product.sku, 2)]),
          status: 201,
          expected: (response) => createdKeys(response).map((key) => event('pu.event.created', key)),
        };
      },
    },
    {
      name: 'units created on Locations are a pu.event.created each',
      async arrange() {
        const product = await givenProduct(ctx);
        const [first, second] = [await givenLocation(ctx), await givenLocation(ctx)];
        const units = [
          aUnit(product.sku, 2, 'PC', { actualLocation: { locationId: first.locationId } }),
          aUnit(product.sku, 3, 'PC', { actualLocation: { locationId: second.locationId } }),
        ];
        return {
          send: () => api.post('/v1/packaging-units', units),
          status: 201,
          expected: (response) => createdKeys(response).map((key) => event('pu.event.created', key)),
        };
      },
    },
  ];

  const moveCases: EventCase[] = [
    {
      name: 'a unit moved whole to a Location is one pu.event.moved',
      async arrange() {
        const product = await givenProduct(ctx);
        const [source, target] = [await givenLocation(ctx), await givenLocation(ctx)];
        const unit = await givenUnitOnLocation(ctx, product.sku, source.locationId, 5);
        return {
          send: () =>
            api.put(`/v1/packaging-units/${unit.pKey}`, { actualLocation: { locationId: target.locationId } }),
          status: 200,
          expected: () => [event('pu.event.moved', unit.pKey)],
        };
      },
    },
    {
      name: 'a part of a unit moved into a LoadUnit is a split: the source pu.event.changed, the new pu.event.created',
      async arrange() {
        const product = await givenProduct(ctx);
        const source = await givenLocation(ctx);
        const unit = await givenUnitOnLocation(ctx, product.sku, source.locationId, 5);
        const { bk } = await probe.givenLoadUnitWith(product.sku, [1]);
        const body = { quantity: pc(2), loadUnit: { transportUnitBK: bk, physicalPosition: '1' } };
        return {
          send: () => api.put(`/v1/packaging-units/${unit.pKey}`, body),
          status: 200,
          expected: (response) => [
            event('pu.event.changed', unit.pKey),
            event('pu.event.created', (response.body as { pKey: string }).pKey),
          ],
        };
      },
    },
    {
      name: 'a move between Locations is pu.event.moved of whole units and changed/created of a split, oldest first',
      async arrange() {
        const product = await givenProduct(ctx);
        const [source, target] = [await givenLocation(ctx), await givenLocation(ctx)];
        const [older, newer] = await givenUnitsOnLocation(ctx, [
          aUnit(product.sku, 5, 'PC', { actualLocation: { locationId: source.locationId } }),
          aUnit(product.sku, 3, 'PC', { actualLocation: { locationId: source.locationId } }),
        ]);
        const body = [
          {
            product: { sku: product.sku },
            quantity: pc(6),
            actualLocation: { locationId: source.locationId },
            targetLocation: { locationId: target.locationId },
          },
        ];
        return {
          send: () => api.put('/v1/packaging-units/move-between-locations', body),
          status: 204,
          expected: async () => [
            event('pu.event.moved', older!.pKey),
            event('pu.event.changed', newer!.pKey),
            event('pu.event.created', (await probe.unitKeysOf(product.sku))[2]!),
          ],
        };
      },
    },
    {
      name: 'a move from a Location into an empty LoadUnit is its lu.event.changed, then pu.event.moved',
      async arrange() {
        const product = await givenProduct(ctx);
        const source = await givenLocation(ctx);
        const unit = await givenUnitOnLocation(ctx, product.sku, source.locationId, 4);
        const { bk, lu } = await probe.givenEmptyLoadUnit();
        const body = {
          product: { sku: product.sku },
          targetTransportUnitBK: bk,
          targetLoadUnitPosition: '1',
          actualLocation: { erpCode: source.erpCode },
        };
        return {
          send: () => api.put('/v1/packaging-units/move-to-load-unit', body),
          status: 204,
          expected: () => [event('lu.event.changed', lu), event('pu.event.moved', unit.pKey)],
        };
      },
    },
    {
      name: 'a move out of a LoadUnit into another holding the Product is a pu.event.moved of each unit',
      async arrange() {
        const product = await givenProduct(ctx);
        const source = await probe.givenLoadUnitWith(product.sku, [2, 3]);
        const target = await probe.givenLoadUnitWith(product.sku, [1]);
        const body = { product: { sku: product.sku }, targetTransportUnitBK: target.bk, targetLoadUnitPosition: '1' };
        return {
          send: () => api.put(`/v1/transport-units/${source.bk}/load-units/1/packaging-units`, body),
          status: 204,
          expected: () => source.units.map((key) => event('pu.event.moved', key)),
        };
      },
    },
    {
      name: 'a quantity moved out of a LoadUnit onto a Location is a split: pu.event.changed, then pu.event.created',
      async arrange() {
        const product = await givenProduct(ctx);
        const source = await probe.givenLoadUnitWith(product.sku, [5]);
        const target = await givenLocation(ctx);
        const body = {
          product: { sku: product.sku },
          quantity: pc(2),
          actualLocation: { locationId: target.locationId },
        };
        return {
          send: () => api.put(`/v1/transport-units/${source.bk}/load-units/1/packaging-units`, body),
          status: 204,
          expected: async () => [
            event('pu.event.changed', source.units[0]!),
            event('pu.event.created', (await probe.unitKeysOf(product.sku))[1]!),
          ],
        };
      },
    },
  ];

  const changeCases: EventCase[] = [
    {
      name: 'a problem report is pu.event.changed of each unit it locks or splits, and pu.event.created of a split',
      async arrange() {
        const product = await givenProduct(ctx);
        const { bk } = await probe.givenLoadUnitWith(product.sku, [5]);
        const [newer] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 1, 'DOZ')]);
        const [older] = await probe.unitKeysOf(product.sku);
        const body = { messageNo: 'QC-1', messageText: 'Damaged', product: { sku: product.sku }, quantity: pc(8) };
        return {
          send: () => api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units/failures`, body),
          status: 204,
          expected: async () => [
            event('pu.event.changed', older!),
            event('pu.event.changed', newer!.pKey),
            event('pu.event.created', (await probe.unitKeysOf(product.sku))[2]!),
          ],
        };
      },
    },
    {
      name: 'releasing a LOCKED unit is one pu.event.changed',
      async arrange() {
        const product = await givenProduct(ctx);
        const { bk, units } = await probe.givenLoadUnitWith(product.sku, [3]);
        const report = { product: { sku: product.sku }, quantity: pc(3) };
        const failures = `/v1/transport-units/${bk}/load-units/1/packaging-units/failures`;
        expectStatus(await api.post(failures, report), 204, 'lock the unit');
        return {
          send: () => api.post(`/v1/packaging-units/${units[0]}/release`),
          status: 200,
          expected: () => [event('pu.event.changed', units[0]!)],
        };
      },
    },
    {
      name: 'releasing an AVAILABLE unit changes nothing and writes no event',
      async arrange() {
        const product = await givenProduct(ctx);
        const { units } = await probe.givenLoadUnitWith(product.sku, [3]);
        return { send: () => api.post(`/v1/packaging-units/${units[0]}/release`), status: 200, expected: () => [] };
      },
    },
    {
      name: 'deleting a unit by pKey is one pu.event.deleted carrying the unit as it was',
      async arrange() {
        const product = await givenProduct(ctx);
        const location = await givenLocation(ctx);
        const unit = await givenUnitOnLocation(ctx, product.sku, location.locationId, 2);
        const before = await probe.plainGet('pu', unit.pKey);
        return {
          send: () => api.del(`/v1/packaging-units/${unit.pKey}`),
          status: 204,
          expected: () => [event('pu.event.deleted', unit.pKey, before)],
        };
      },
    },
    {
      name: 'deleting a quantity on a Location is pu.event.deleted of emptied units and pu.event.changed of reduced',
      async arrange() {
        const product = await givenProduct(ctx);
        const location = await givenLocation(ctx);
        const [older, newer] = await givenUnitsOnLocation(ctx, [
          aUnit(product.sku, 5, 'PC', { actualLocation: { locationId: location.locationId } }),
          aUnit(product.sku, 3, 'PC', { actualLocation: { locationId: location.locationId } }),
        ]);
        const before = await probe.plainGet('pu', older!.pKey);
        const body = {
          product: { sku: product.sku },
          actualLocation: { locationId: location.locationId },
          quantity: pc(6),
        };
        return {
          send: () => api.del('/v1/packaging-units', body),
          status: 204,
          expected: () => [event('pu.event.deleted', older!.pKey, before), event('pu.event.changed', newer!.pKey)],
        };
      },
    },
  ];

  return { create: createCases, moves: moveCases, changes: changeCases };
}
