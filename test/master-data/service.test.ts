import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { ApiError } from '../../src/http/api-error.js';
import {
  findLocationsByIds,
  findTransportUnit,
  locationGroupIdsWithChildren,
  registerTransportUnit,
  requireLocation,
} from '../../src/master-data/service.js';
import { locationView } from '../../src/master-data/view.js';
import { useTestApp } from '../support/app.js';
import {
  aLocation,
  givenGroups,
  givenLocations,
  TIMESTAMP,
  unique,
  UUID,
  ignoreTeardownDisconnects,
} from './builders.js';

const ctx = useTestApp();
ignoreTeardownDisconnects(ctx);

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

async function groupIds(...names: string[]): Promise<number[]> {
  const result = await ctx.db.pool.query<{ id: string }>(
    'SELECT id FROM location_group WHERE name = ANY($1) ORDER BY id',
    [names],
  );
  return result.rows.map((row) => Number(row.id));
}

describe('requireLocation', () => {
  it('finds a Location by locationId or by erpCode', async () => {
    const location = aLocation({ erpCode: unique('ERP') });
    await givenLocations(ctx.app, location);

    const byId = await requireLocation(ctx.db.pool, { locationId: location.locationId as string });
    const byErpCode = await requireLocation(ctx.db.pool, { erpCode: location.erpCode as string });

    expect(byErpCode).toEqual(byId);
    expect(byId).toMatchObject({ locationId: location.locationId, erpCode: location.erpCode, ol: 0 });
    expect(typeof byId.id).toBe('number');
  });

  it('rejects an unknown value with the key of the identifier the caller used', async () => {
    const byId = await rejection(requireLocation(ctx.db.pool, { locationId: 'no-such-id' }));
    const byErpCode = await rejection(requireLocation(ctx.db.pool, { erpCode: 'no-such-code' }));

    expect(byId).toMatchObject({ status: 404, messageKey: 'owms.wms.inv.loc.idNotExists', obj: ['no-such-id'] });
    expect(byErpCode).toMatchObject({
      status: 404,
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: ['no-such-code'],
    });
  });
});

describe('locationGroupIdsWithChildren', () => {
  it('answers the group and all its descendants, but not its parent or siblings', async () => {
    const [root, area, aisle, bin, sibling] = ['Root', 'Area', 'Aisle', 'Bin', 'Sibling'].map(unique) as [
      string,
      string,
      string,
      string,
      string,
    ];
    await givenGroups(
      ctx.app,
      { name: bin, parent: aisle },
      { name: aisle, parent: area },
      { name: area, parent: root },
      { name: sibling, parent: root },
      { name: root },
    );

    expect(await locationGroupIdsWithChildren(ctx.db.pool, area)).toEqual(await groupIds(area, aisle, bin));
    expect(await locationGroupIdsWithChildren(ctx.db.pool, [aisle, sibling])).toEqual(
      await groupIds(aisle, bin, sibling),
    );
    expect(await locationGroupIdsWithChildren(ctx.db.pool, bin)).toEqual(await groupIds(bin));
  });

  it('rejects an unknown group name with owms.common.common.lg.notFoundByName', async () => {
    const known = unique('Known');
    await givenGroups(ctx.app, { name: known });

    const error = await rejection(locationGroupIdsWithChildren(ctx.db.pool, [known, 'no-such-group']));

    expect(error).toMatchObject({
      status: 404,
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: ['no-such-group'],
    });
  });
});

describe('registerTransportUnit', () => {
  it('registers a TransportUnit without type or location, and answers the same one when called again', async () => {
    const bk = unique('TU');

    const first = await withTransaction(ctx.db.pool, (tx) => registerTransportUnit(tx, bk));
    const second = await withTransaction(ctx.db.pool, (tx) => registerTransportUnit(tx, bk));

    expect(second).toEqual(first);
    expect(first.bk).toBe(bk);
    expect(await findTransportUnit(ctx.db.pool, bk)).toMatchObject({
      id: first.id,
      bk,
      transportUnitType: null,
      actualLocationId: null,
      ol: 0,
    });
  });

  it('registers one TransportUnit when many transactions name it at the same time', async () => {
    const bk = unique('TU');

    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        withTransaction(ctx.db.pool, async (tx) => {
          const registered = await registerTransportUnit(tx, bk);
          // Hold the transaction open a moment so the competitors overlap with it.
          await tx.query('SELECT pg_sleep(0.02)');
          return registered;
        }),
      ),
    );

    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    const count = await ctx.db.pool.query('SELECT 1 FROM transport_unit WHERE bk = $1', [bk]);
    expect(count.rowCount).toBe(1);
  });

  it('rejects a blank business key with owms.wms.inv.tu.bk', async () => {
    const error = await rejection(withTransaction(ctx.db.pool, (tx) => registerTransportUnit(tx, '  ')));

    expect(error).toMatchObject({ status: 400, messageKey: 'owms.wms.inv.tu.bk' });
  });
});

describe('findTransportUnit', () => {
  it('answers undefined for an unknown business key', async () => {
    expect(await findTransportUnit(ctx.db.pool, unique('NOTU'))).toBeUndefined();
  });
});

describe('findLocationsByIds and locationView', () => {
  it('gives embeddable Locations, fields in the spec order and absent values left out', async () => {
    const group = unique('Zone');
    await givenGroups(ctx.app, { name: group });
    const full = aLocation({
      erpCode: unique('ERP'),
      locationGroupName: group,
      description: 'd',
      noMaxTransportUnits: 2,
    });
    const bare = aLocation();
    await givenLocations(ctx.app, full, bare);
    const fullRow = await requireLocation(ctx.db.pool, { locationId: full.locationId as string });
    const bareRow = await requireLocation(ctx.db.pool, { locationId: bare.locationId as string });

    const byId = await findLocationsByIds(ctx.db.pool, [fullRow.id, bareRow.id, fullRow.id]);

    expect(byId.size).toBe(2);
    expect(Object.keys(locationView(byId.get(fullRow.id)!))).toEqual([
      'pKey',
      'locationId',
      'erpCode',
      'locationGroupName',
      'incomingActive',
      'outgoingActive',
      'plcState',
      'description',
      'noMaxTransportUnits',
      'ol',
      'createDt',
    ]);
    expect(locationView(byId.get(bareRow.id)!)).toEqual({
      pKey: expect.stringMatching(UUID),
      locationId: bare.locationId,
      incomingActive: true,
      outgoingActive: true,
      plcState: 0,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
    });
    expect(await findLocationsByIds(ctx.db.pool, [])).toEqual(new Map());
  });
});
