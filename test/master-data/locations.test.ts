import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  aLocation,
  BASE,
  get,
  getLocation,
  givenGroups,
  givenLocations,
  HAL,
  putLocations,
  TIMESTAMP,
  unique,
  UUID,
  ignoreTeardownDisconnects,
} from './builders.js';

const ctx = useTestApp();
ignoreTeardownDisconnects(ctx);

async function locationCount(locationIds: readonly string[]): Promise<number> {
  const result = await ctx.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM location WHERE location_id = ANY($1)',
    [locationIds],
  );
  return result.rows[0]!.n;
}

describe('PUT /v1/locations', () => {
  it('stores every field and GET by locationId answers them as HAL in the spec order', async () => {
    const group = unique('Zone');
    await givenGroups(ctx.app, { name: group });
    const locationId = unique('EXT_/0000/01');
    const erpCode = unique('ERP');

    const response = await putLocations(ctx.app, [
      {
        locationId,
        erpCode,
        locationGroupName: group,
        incomingActive: false,
        outgoingActive: true,
        plcState: 3,
        description: 'Goods in',
        noMaxTransportUnits: 5,
      },
    ]);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const found = await get(ctx.app, `/v1/locations?locationId=${encodeURIComponent(locationId)}`);
    expect(found.status).toBe(200);
    expect(found.headers['content-type']).toBe(HAL);
    expect(found.body).toEqual({
      pKey: expect.stringMatching(UUID),
      locationId,
      erpCode,
      locationGroupName: group,
      incomingActive: false,
      outgoingActive: true,
      plcState: 3,
      description: 'Goods in',
      noMaxTransportUnits: 5,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: { self: { href: `${BASE}/v1/locations?locationId=${encodeURIComponent(locationId)}` } },
    });
    expect(Object.keys(found.body as object)).toEqual([
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
      '_links',
    ]);
  });

  it('finds the same Location by its erpCode', async () => {
    const location = aLocation({ erpCode: unique('ERP') });
    await givenLocations(ctx.app, location);

    const found = await get(ctx.app, `/v1/locations?erpCode=${encodeURIComponent(location.erpCode as string)}`);

    expect(found.status).toBe(200);
    expect(found.body).toEqual(await getLocation(ctx.app, location.locationId as string));
  });

  it('applies the defaults and leaves absent values out', async () => {
    const location = aLocation();
    await givenLocations(ctx.app, location);

    expect(await getLocation(ctx.app, location.locationId as string)).toEqual({
      pKey: expect.stringMatching(UUID),
      locationId: location.locationId,
      incomingActive: true,
      outgoingActive: true,
      plcState: 0,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: expect.any(Object),
    });
  });

  it('updates by locationId, raising ol only when something changed and keeping pKey and createDt', async () => {
    const location = aLocation({ erpCode: unique('ERP'), plcState: 1 });
    await givenLocations(ctx.app, location);
    const created = await getLocation(ctx.app, location.locationId as string);

    await givenLocations(ctx.app, { ...location, plcState: 2 });
    const changed = await getLocation(ctx.app, location.locationId as string);
    await givenLocations(ctx.app, { ...location, plcState: 2 });
    const unchanged = await getLocation(ctx.app, location.locationId as string);

    expect(changed).toEqual({ ...created, plcState: 2, ol: 1 });
    expect(unchanged).toEqual(changed);
  });

  it('replaces the Location as sent: optional values left out are cleared', async () => {
    const erpCode = unique('ERP');
    const location = aLocation({ erpCode, description: 'old', incomingActive: false });
    await givenLocations(ctx.app, location);

    await givenLocations(ctx.app, { locationId: location.locationId });

    const stored = await getLocation(ctx.app, location.locationId as string);
    expect(stored).not.toHaveProperty('erpCode');
    expect(stored).not.toHaveProperty('description');
    expect(stored).toMatchObject({ incomingActive: true, ol: 1 });
    expect((await get(ctx.app, `/v1/locations?erpCode=${erpCode}`)).status).toBe(404);
  });

  it('ignores read-only and unknown fields', async () => {
    const location = aLocation({
      pKey: '00000000-0000-0000-0000-000000000000',
      ol: 9,
      createDt: '2000-01-01T00:00:00.000Z',
      links: [{ rel: 'self', href: 'x' }],
      colour: 'red',
    });

    expect((await putLocations(ctx.app, [location])).status).toBe(204);

    const stored = await getLocation(ctx.app, location.locationId as string);
    expect(stored.pKey).not.toBe(location.pKey);
    expect(stored.ol).toBe(0);
    expect(stored.createDt).not.toBe(location.createDt);
    expect(stored).not.toHaveProperty('colour');
  });

  it('lets one request swap ERP codes between two Locations', async () => {
    const [x, y] = [unique('ERP-X'), unique('ERP-Y')];
    const first = aLocation({ erpCode: x });
    const second = aLocation({ erpCode: y });
    await givenLocations(ctx.app, first, second);

    const response = await putLocations(ctx.app, [
      { ...first, erpCode: y },
      { ...second, erpCode: x },
    ]);

    expect(response.status).toBe(204);
    expect((await getLocation(ctx.app, first.locationId as string)).erpCode).toBe(y);
    expect((await getLocation(ctx.app, second.locationId as string)).erpCode).toBe(x);
  });

  it('answers 404 naming an unknown locationGroupName and stores nothing of the request', async () => {
    const missing = unique('NoSuchGroup');
    const fine = aLocation();

    const response = await putLocations(ctx.app, [fine, aLocation({ locationGroupName: missing })]);

    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(HAL);
    expect(response.body).toEqual({
      message: `LocationGroup with name [${missing}] not found`,
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: [missing],
      httpStatus: '404',
      class: 'String',
    });
    expect(await locationCount([fine.locationId as string])).toBe(0);
  });

  it('answers 409 when the erpCode is used by another Location, changing nothing', async () => {
    const erpCode = unique('ERP');
    const owner = aLocation({ erpCode });
    await givenLocations(ctx.app, owner);
    const other = aLocation({ erpCode });

    const response = await putLocations(ctx.app, [other]);

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      message: `The erpCode [${erpCode}] is already used by another Location`,
      messageKey: 'owms.wms.inv.loc.erpCodeAlreadyUsed',
      obj: [erpCode],
      httpStatus: '409',
      class: 'String',
    });
    expect(await locationCount([other.locationId as string])).toBe(0);
    expect((await getLocation(ctx.app, owner.locationId as string)).erpCode).toBe(erpCode);
  });

  it('answers 409 when two Locations of the request carry the same erpCode', async () => {
    const erpCode = unique('ERP');

    const response = await putLocations(ctx.app, [aLocation({ erpCode }), aLocation({ erpCode })]);

    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.loc.erpCodeAlreadyUsed', obj: [erpCode] });
  });

  it('answers 400 when a locationId appears twice', async () => {
    const location = aLocation();

    const response = await putLocations(ctx.app, [location, aLocation(), { ...location, plcState: 4 }]);

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: '[2].locationId: duplicate of [0].locationId',
      messageKey: 'core.validation.error',
      obj: ['[2].locationId'],
      httpStatus: '400',
    });
  });

  it('answers 400 listing every invalid field, never coercing types, and stores nothing', async () => {
    const fine = aLocation();

    const response = await putLocations(ctx.app, [
      fine,
      { locationId: '   ', incomingActive: 'true' },
      { plcState: 1.5, noMaxTransportUnits: -1, erpCode: 12, description: false },
    ]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', httpStatus: '400' });
    expect(response.body.obj).toEqual([
      '[1].locationId',
      '[1].incomingActive',
      '[2].locationId',
      '[2].erpCode',
      '[2].plcState',
      '[2].description',
      '[2].noMaxTransportUnits',
    ]);
    expect(response.body.message).toContain('[1].locationId: must not be blank');
    expect(response.body.message).toContain('[2].locationId: required');
    expect(response.body.message).toContain('[1].incomingActive: must be of type boolean');
    expect(await locationCount([fine.locationId as string])).toBe(0);
  });

  it.each([
    ['an empty array', []],
    ['a single object instead of an array', { locationId: 'L' }],
    ['a plcState beyond a 32-bit integer', [{ locationId: 'L', plcState: 2 ** 31 }]],
    ['a NUL character in a description', [{ locationId: 'L', description: 'a\u0000b' }]],
  ])('answers 400 core.validation.error for %s', async (_case, body) => {
    const response = await putLocations(ctx.app, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error' });
  });

  it('stores thousands of Locations in one request', async () => {
    const locations = Array.from({ length: 5000 }, (_unused, index) =>
      aLocation({ erpCode: `BULK-${index}-${unique('E')}`, plcState: index }),
    );

    const response = await putLocations(ctx.app, locations);

    expect(response.status).toBe(204);
    expect(await locationCount(locations.map((location) => location.locationId as string))).toBe(5000);
  });

  it('lets concurrent upserts of the same Locations all succeed', async () => {
    const group = unique('Zone');
    await givenGroups(ctx.app, { name: group });
    const locations = Array.from({ length: 40 }, (_unused, index) =>
      aLocation({ erpCode: unique(`C${index}`), locationGroupName: group }),
    );

    const responses = await Promise.all(
      Array.from({ length: 8 }, (_unused, n) =>
        putLocations(
          ctx.app,
          (n % 2 === 0 ? locations : [...locations].reverse()).map((location) => ({ ...location, plcState: n })),
        ),
      ),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(8).fill(204));
    expect(await locationCount(locations.map((location) => location.locationId as string))).toBe(40);
  });

  it('gives an erpCode claimed by two concurrent requests to one of them and answers the other 409', async () => {
    for (let round = 0; round < 5; round += 1) {
      const erpCode = unique('ERP');

      const responses = await Promise.all([
        putLocations(ctx.app, [aLocation({ erpCode })]),
        putLocations(ctx.app, [aLocation({ erpCode })]),
      ]);

      expect(responses.map((response) => response.status).sort()).toEqual([204, 409]);
      expect(responses.find((response) => response.status === 409)!.body).toMatchObject({
        messageKey: 'owms.wms.inv.loc.erpCodeAlreadyUsed',
        obj: [erpCode],
      });
    }
  });

  it('answers 401 without a token', async () => {
    expect((await request(ctx.app).put('/v1/locations').send([aLocation()])).status).toBe(401);
  });
});

describe('GET /v1/locations', () => {
  it('answers 404 owms.wms.inv.loc.idNotExists for an unknown locationId', async () => {
    const locationId = unique('NOWHERE');

    const response = await get(ctx.app, `/v1/locations?locationId=${locationId}`);

    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(HAL);
    expect(response.body).toEqual({
      message: `Location with locationId [${locationId}] does not exist`,
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: [locationId],
      httpStatus: '404',
      class: 'String',
    });
  });

  it('answers 404 owms.wms.inv.loc.erpCodeNotExists for an unknown erpCode', async () => {
    const erpCode = unique('NOERP');

    const response = await get(ctx.app, `/v1/locations?erpCode=${erpCode}`);

    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: `Location with erpCode [${erpCode}] does not exist`,
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: [erpCode],
      httpStatus: '404',
      class: 'String',
    });
  });

  it.each([
    ['neither parameter', '/v1/locations'],
    ['both parameters', '/v1/locations?locationId=a&erpCode=b'],
    ['a blank locationId', '/v1/locations?locationId=%20'],
    ['a repeated parameter', '/v1/locations?locationId=a&locationId=b'],
    ['a NUL character', '/v1/locations?erpCode=a%00b'],
  ])('answers 400 core.validation.error for %s', async (_case, path) => {
    const response = await get(ctx.app, path);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', httpStatus: '400' });
  });
});

describe('OpenAPI document', () => {
  it('describes the master data operations from their schemas', async () => {
    const response = await request(ctx.app).get('/v3/api-docs');

    expect(response.status).toBe(200);
    const paths = response.body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/v1/locations']!).sort()).toEqual(['get', 'options', 'put']);
    expect(Object.keys(paths['/v1/location-groups']!).sort()).toEqual(['get', 'options', 'put']);
    expect(Object.keys(paths['/v1/transport-units']!).sort()).toEqual(['get', 'options', 'patch', 'post']);
    expect(response.body.components.schemas).toHaveProperty('LocationUpsert');
  });
});
