import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { registerTransportUnit } from '../../src/master-data/service.js';
import { useTestApp } from '../support/app.js';
import {
  aLocation,
  BASE,
  get,
  getLocation,
  givenGroups,
  givenLocations,
  HAL,
  patch,
  postTransportUnit,
  TIMESTAMP,
  unique,
  ignoreTeardownDisconnects,
} from './builders.js';

const ctx = useTestApp();
ignoreTeardownDisconnects(ctx);

const getTransportUnit = (bk: string) => get(ctx.app, `/v1/transport-units?bk=${encodeURIComponent(bk)}`);

async function givenLocation(overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const location = aLocation({ erpCode: unique('ERP'), ...overrides });
  await givenLocations(ctx.app, location);
  return getLocation(ctx.app, location.locationId as string);
}

async function givenTransportUnit(bk: string, erpCode: string): Promise<void> {
  const response = await postTransportUnit(ctx.app, {
    transportUnitBK: bk,
    transportUnitType: 'PALLET',
    actualLocation: { erpCode },
  });
  if (response.status !== 201) throw new Error(`POST transport unit: ${response.status}`);
}

function withoutLinks(resource: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(resource).filter(([name]) => name !== '_links'));
}

describe('POST /v1/transport-units', () => {
  it('creates the TransportUnit on the Location named by erpCode: 201, Location header, no body', async () => {
    const group = unique('Zone');
    await givenGroups(ctx.app, { name: group });
    const location = await givenLocation({ locationGroupName: group });
    const bk = unique('TU 1/ä');

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: bk,
      transportUnitType: 'EURO',
      actualLocation: { erpCode: location.erpCode },
    });

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${BASE}/v1/transport-units?bk=${encodeURIComponent(bk)}`);
    expect(response.text).toBe('');
    const found = await getTransportUnit(bk);
    expect(found.status).toBe(200);
    expect(found.headers['content-type']).toBe(HAL);
    expect(found.body).toEqual({
      transportUnitBK: bk,
      transportUnitType: 'EURO',
      actualLocation: withoutLinks(location),
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: {
        self: { href: `${BASE}/v1/transport-units?bk=${encodeURIComponent(bk)}` },
        actualLocation: {
          href: `${BASE}/v1/locations?locationId=${encodeURIComponent(location.locationId as string)}`,
        },
      },
    });
    expect(Object.keys(found.body as object)).toEqual([
      'transportUnitBK',
      'transportUnitType',
      'actualLocation',
      'ol',
      'createDt',
      '_links',
    ]);
  });

  it('accepts the Location by locationId and ignores unknown fields', async () => {
    const location = await givenLocation();
    const bk = unique('TU');

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: bk,
      transportUnitType: 'BOX',
      actualLocation: { locationId: location.locationId, plcState: 'whatever' },
      pKey: 'mine',
      weight: 12,
    });

    expect(response.status).toBe(201);
    expect((await getTransportUnit(bk)).body.actualLocation.locationId).toBe(location.locationId);
  });

  it.each([
    ['a missing transportUnitBK', { transportUnitType: 'T', actualLocation: { erpCode: 'E' } }, 'owms.wms.inv.tu.bk'],
    ['a blank transportUnitBK', { transportUnitBK: ' ', transportUnitType: 'T' }, 'owms.wms.inv.tu.bk'],
    ['nothing at all', {}, 'owms.wms.inv.tu.bk'],
    [
      'a missing transportUnitType',
      { transportUnitBK: 'B', actualLocation: { erpCode: 'E' } },
      'owms.wms.inv.tu.transportUnitType',
    ],
    [
      'a null transportUnitType',
      { transportUnitBK: 'B', transportUnitType: null },
      'owms.wms.inv.tu.transportUnitType',
    ],
    [
      'a missing actualLocation',
      { transportUnitBK: 'B', transportUnitType: 'T' },
      'owms.wms.inv.tu.actualLocation.erpCode',
    ],
    [
      'an empty actualLocation',
      { transportUnitBK: 'B', transportUnitType: 'T', actualLocation: {} },
      'owms.wms.inv.tu.actualLocation.erpCode',
    ],
    [
      'a blank erpCode',
      { transportUnitBK: 'B', transportUnitType: 'T', actualLocation: { erpCode: '' } },
      'owms.wms.inv.tu.actualLocation.erpCode',
    ],
  ])('answers 400 with the spec key for %s', async (_case, body, messageKey) => {
    const response = await postTransportUnit(ctx.app, body);

    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe(HAL);
    expect(response.body).toEqual({ message: expect.any(String), messageKey, httpStatus: '400' });
  });

  it.each([
    ['a number as transportUnitBK', { transportUnitBK: 42, transportUnitType: 'T' }, ['transportUnitBK']],
    [
      'a string as actualLocation',
      { transportUnitBK: 'B', transportUnitType: 'T', actualLocation: 'E' },
      ['actualLocation'],
    ],
    ['an array body', [{ transportUnitBK: 'B' }], ['body']],
    ['a NUL character in transportUnitBK', { transportUnitBK: 'B\u0000', transportUnitType: 'T' }, ['transportUnitBK']],
  ])('answers 400 core.validation.error for %s', async (_case, body, paths) => {
    const response = await postTransportUnit(ctx.app, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: paths });
  });

  it('answers 404 owms.wms.inv.loc.erpCodeNotExists for an unknown erpCode and creates nothing', async () => {
    const [bk, erpCode] = [unique('TU'), unique('NOERP')];

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: bk,
      transportUnitType: 'T',
      actualLocation: { erpCode },
    });

    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: `Location with erpCode [${erpCode}] does not exist`,
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: [erpCode],
      httpStatus: '404',
      class: 'String',
    });
    expect((await getTransportUnit(bk)).status).toBe(404);
  });

  it('answers 404 owms.wms.inv.loc.idNotExists for an unknown locationId', async () => {
    const locationId = unique('NOLOC');

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: unique('TU'),
      transportUnitType: 'T',
      actualLocation: { locationId },
    });

    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.loc.idNotExists', obj: [locationId] });
  });

  it('answers 400 when erpCode and locationId name different Locations', async () => {
    const [first, second] = [await givenLocation(), await givenLocation()];

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: unique('TU'),
      transportUnitType: 'T',
      actualLocation: { erpCode: first.erpCode, locationId: second.locationId },
    });

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['locationId'] });
  });

  it('answers 409 owms.wms.inv.tu.alreadyExists when the TransportUnit exists, leaving it as it was', async () => {
    const [here, there] = [await givenLocation(), await givenLocation()];
    const bk = unique('TU');
    await givenTransportUnit(bk, here.erpCode as string);

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: bk,
      transportUnitType: 'OTHER',
      actualLocation: { erpCode: there.erpCode },
    });

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      message: `TransportUnit with business key [${bk}] already exists`,
      messageKey: 'owms.wms.inv.tu.alreadyExists',
      obj: [bk],
      httpStatus: '409',
      class: 'String',
    });
    expect((await getTransportUnit(bk)).body).toMatchObject({
      transportUnitType: 'PALLET',
      actualLocation: { erpCode: here.erpCode },
      ol: 0,
    });
  });

  it('completes a TransportUnit that was only registered on the spot', async () => {
    const location = await givenLocation();
    const bk = unique('TU');
    await withTransaction(ctx.db.pool, (tx) => registerTransportUnit(tx, bk));
    const registered = await getTransportUnit(bk);

    const response = await postTransportUnit(ctx.app, {
      transportUnitBK: bk,
      transportUnitType: 'PALLET',
      actualLocation: { erpCode: location.erpCode },
    });

    expect(registered.status).toBe(200);
    expect(registered.body).toEqual({
      transportUnitBK: bk,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: { self: { href: `${BASE}/v1/transport-units?bk=${bk}` } },
    });
    expect(response.status).toBe(201);
    expect((await getTransportUnit(bk)).body).toMatchObject({
      transportUnitType: 'PALLET',
      actualLocation: { locationId: location.locationId },
      ol: 1,
      createDt: registered.body.createDt,
    });
  });

  it('creates a TransportUnit once when the same one is posted concurrently', async () => {
    const location = await givenLocation();
    const bk = unique('TU');
    const body = { transportUnitBK: bk, transportUnitType: 'T', actualLocation: { erpCode: location.erpCode } };

    const responses = await Promise.all(Array.from({ length: 6 }, () => postTransportUnit(ctx.app, body)));

    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe('GET /v1/transport-units', () => {
  it('answers 404 owms.wms.inv.tu.bkNotExists for an unknown key', async () => {
    const bk = unique('NOTU');

    const response = await getTransportUnit(bk);

    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(HAL);
    expect(response.body).toEqual({
      message: `TransportUnit with business key [${bk}] does not exist`,
      messageKey: 'owms.wms.inv.tu.bkNotExists',
      obj: [bk],
      httpStatus: '404',
      class: 'String',
    });
  });

  it('answers 400 without bk', async () => {
    const response = await get(ctx.app, '/v1/transport-units');

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['bk'] });
  });
});

describe('PATCH /v1/transport-units', () => {
  it('moves the TransportUnit to the Location with that erpCode and raises ol', async () => {
    const [from, to] = [await givenLocation(), await givenLocation()];
    const bk = unique('TU');
    await givenTransportUnit(bk, from.erpCode as string);

    const response = await patch(ctx.app, `/v1/transport-units?bk=${bk}&newLocation=${to.erpCode as string}`);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await getTransportUnit(bk)).body).toMatchObject({ actualLocation: withoutLinks(to), ol: 1 });
  });

  it('leaves ol as it is when the TransportUnit already stands there', async () => {
    const location = await givenLocation();
    const bk = unique('TU');
    await givenTransportUnit(bk, location.erpCode as string);

    const response = await patch(ctx.app, `/v1/transport-units?bk=${bk}&newLocation=${location.erpCode as string}`);

    expect(response.status).toBe(204);
    expect((await getTransportUnit(bk)).body.ol).toBe(0);
  });

  it('answers 404 owms.wms.inv.tu.bkNotExists for an unknown TransportUnit', async () => {
    const location = await givenLocation();
    const bk = unique('NOTU');

    const response = await patch(ctx.app, `/v1/transport-units?bk=${bk}&newLocation=${location.erpCode as string}`);

    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.tu.bkNotExists', obj: [bk] });
  });

  it('answers 404 owms.wms.inv.loc.erpCodeNotExists for an unknown Location and does not move', async () => {
    const location = await givenLocation();
    const bk = unique('TU');
    await givenTransportUnit(bk, location.erpCode as string);
    const erpCode = unique('NOERP');

    const response = await patch(ctx.app, `/v1/transport-units?bk=${bk}&newLocation=${erpCode}`);

    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: `Location with erpCode [${erpCode}] does not exist`,
      messageKey: 'owms.wms.inv.loc.erpCodeNotExists',
      obj: [erpCode],
      httpStatus: '404',
      class: 'String',
    });
    expect((await getTransportUnit(bk)).body).toMatchObject({ actualLocation: { erpCode: location.erpCode }, ol: 0 });
  });

  it('answers 400 naming the missing query parameters', async () => {
    const response = await patch(ctx.app, '/v1/transport-units?bk=');

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['bk', 'newLocation'] });
  });
});
