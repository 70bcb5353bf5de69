import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';
import {
  divide,
  divideJson,
  givenDivided,
  givenTransportUnitWithOneLoadUnit,
  HOST,
  loadUnitsOf,
  transportUnitCount,
  unique,
} from './load-unit-api.js';

const ctx = useTestApp();

const positionsOf = async (bk: string): Promise<string[]> =>
  (await loadUnitsOf(ctx.db.pool, bk)).map((loadUnit) => loadUnit.physicalPosition);

describe('POST /v1/transport-unit (lu-divide)', () => {
  it('answers 201 without a body and creates LoadUnits at positions "1" to "n" of the given type', async () => {
    const bk = unique('TU');
    const response = await divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts: '3' });

    expect(response.status).toBe(201);
    expect(response.text).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    const stored = await loadUnitsOf(ctx.db.pool, bk);
    expect(
      stored.map(({ physicalPosition, type, locked, productId, ol }) => ({
        physicalPosition,
        type,
        locked,
        productId,
        ol,
      })),
    ).toEqual([
      { physicalPosition: '1', type: 'BOX', locked: false, productId: null, ol: 0 },
      { physicalPosition: '2', type: 'BOX', locked: false, productId: null, ol: 0 },
      { physicalPosition: '3', type: 'BOX', locked: false, productId: null, ol: 0 },
    ]);
  });

  it('registers an unknown TransportUnit on the spot, without type or location (D15)', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);

    const { rows } = await ctx.db.pool.query(
      'SELECT bk, transport_unit_type, actual_location_id, ol FROM transport_unit WHERE bk = $1',
      [bk],
    );
    expect(rows).toEqual([{ bk, transport_unit_type: null, actual_location_id: null, ol: 0 }]);
  });

  it('divides a TransportUnit that is already registered without registering it twice', async () => {
    const bk = unique('TU');
    await ctx.db.pool.query('INSERT INTO transport_unit (bk) VALUES ($1)', [bk]);

    await givenDivided(ctx.app, bk, 2);

    expect(await transportUnitCount(ctx.db.pool, bk)).toBe(1);
    expect(await positionsOf(bk)).toEqual(['1', '2']);
  });

  it('accepts a JSON body with parts as a JSON integer', async () => {
    const bk = unique('TU');
    const response = await divideJson(ctx.app, {
      transportUnitBK: bk,
      loadUnitType: 'TRAY',
      parts: 2,
      extra: 'ignored',
    });

    expect(response.status).toBe(201);
    expect(response.text).toBe('');
    expect(await positionsOf(bk)).toEqual(['1', '2']);
  });

  it('creates one LoadUnit for parts=1 and 1000 for parts=1000', async () => {
    const one = unique('TU');
    const many = unique('TU');
    await givenDivided(ctx.app, one, 1);
    await givenDivided(ctx.app, many, 1000);

    expect(await positionsOf(one)).toEqual(['1']);
    const positions = await positionsOf(many);
    expect(positions).toHaveLength(1000);
    expect(new Set(positions)).toEqual(new Set(Array.from({ length: 1000 }, (_, i) => String(i + 1))));
  });

  it('answers 409 owms.wms.inv.tu.alreadyDivided when the TransportUnit already has two or more LoadUnits', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);

    const response = await divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts: '5' });

    expectApiDeclined(response, {
      status: 409,
      message: `TransportUnit [${bk}] is already divided into several LoadUnits`,
      messageKey: 'owms.wms.inv.tu.alreadyDivided',
      obj: [bk],
      class: 'String',
    });
    expect(await positionsOf(bk)).toEqual(['1', '2']);
  });

  it('keeps the one LoadUnit a TransportUnit has and adds the positions still missing', async () => {
    const bk = unique('TU');
    const existing = await givenTransportUnitWithOneLoadUnit(ctx.db.pool, bk, '2', 'PALLET');

    await givenDivided(ctx.app, bk, 3, 'BOX');

    const stored = await loadUnitsOf(ctx.db.pool, bk);
    expect(stored.map(({ pKey, physicalPosition, type }) => ({ pKey, physicalPosition, type }))).toEqual([
      { pKey: existing, physicalPosition: '2', type: 'PALLET' },
      { pKey: expect.any(String), physicalPosition: '1', type: 'BOX' },
      { pKey: expect.any(String), physicalPosition: '3', type: 'BOX' },
    ]);
    expect(await transportUnitCount(ctx.db.pool, bk)).toBe(1);
  });

  it('keeps a single LoadUnit at a position outside "1" to "n" and adds all n positions', async () => {
    const bk = unique('TU');
    await givenTransportUnitWithOneLoadUnit(ctx.db.pool, bk, 'A');

    await givenDivided(ctx.app, bk, 2);

    expect(await positionsOf(bk)).toEqual(['A', '1', '2']);
  });

  it('leaves a TransportUnit whose one LoadUnit is at "1" unchanged when divided into one part', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);

    await givenDivided(ctx.app, bk, 1);

    expect(await positionsOf(bk)).toEqual(['1']);
  });

  describe('validation (400 core.validation.error, nothing stored)', () => {
    it.each([
      ['0', 'must be an integer from 1 to 1000'],
      ['-1', 'must be an integer from 1 to 1000'],
      ['1001', 'must be an integer from 1 to 1000'],
      ['abc', 'must be an integer from 1 to 1000'],
      ['1.5', 'must be an integer from 1 to 1000'],
      ['', 'must be an integer from 1 to 1000'],
      [' 3', 'must be an integer from 1 to 1000'],
    ])('refuses parts=%j', async (parts, problem) => {
      const bk = unique('TU');
      const response = await divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts });

      expectValidationError(response, [['parts', problem]]);
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(0);
    });

    it.each([0, -1, 1001, 1.5])('refuses parts=%j in a JSON body', async (parts) => {
      const bk = unique('TU');
      const response = await divideJson(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts });

      expectValidationError(response, [['parts', 'must be an integer from 1 to 1000']]);
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(0);
    });

    it('refuses parts as a JSON string (D0: JSON types are not coerced)', async () => {
      const response = await divideJson(ctx.app, { transportUnitBK: unique('TU'), loadUnitType: 'BOX', parts: '3' });

      expectValidationError(response, [['parts', 'must be of type number']]);
    });

    it('refuses a loadUnitType of only spaces', async () => {
      const bk = unique('TU');
      const response = await divide(ctx.app, { transportUnitBK: bk, loadUnitType: '   ', parts: '2' });

      expectValidationError(response, [['loadUnitType', 'must not be blank']]);
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(0);
    });

    it('refuses a blank transportUnitBK', async () => {
      const response = await divide(ctx.app, { transportUnitBK: ' ', loadUnitType: 'BOX', parts: '2' });

      expectValidationError(response, [['transportUnitBK', 'must not be blank']]);
    });

    it('names every missing field', async () => {
      const response = await divide(ctx.app, { other: 'x' });

      expectValidationError(response, [
        ['transportUnitBK', 'required'],
        ['loadUnitType', 'required'],
        ['parts', 'required'],
      ]);
    });

    it('names every field of a request without a body', async () => {
      const response = await request(ctx.app)
        .post('/v1/transport-unit')
        .set('Authorization', bearer())
        .set('Host', HOST);

      expectValidationError(response, [
        ['transportUnitBK', 'required'],
        ['loadUnitType', 'required'],
        ['parts', 'required'],
      ]);
    });

    it('refuses a field sent twice in the form', async () => {
      const bk = unique('TU');
      const response = await request(ctx.app)
        .post('/v1/transport-unit')
        .set('Authorization', bearer())
        .set('Host', HOST)
        .type('form')
        .send(`transportUnitBK=${bk}&loadUnitType=BOX&parts=2&parts=3`);

      expectValidationError(response, [['parts', 'must be of type string']]);
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(0);
    });
  });

  it('answers 415 in the server-declined format for a text/plain body', async () => {
    const response = await request(ctx.app)
      .post('/v1/transport-unit')
      .set('Authorization', bearer())
      .set('Host', HOST)
      .set('Content-Type', 'text/plain')
      .send('transportUnitBK=TU&loadUnitType=BOX&parts=2');

    expectServerDeclined(response, {
      status: 415,
      error: 'Unsupported Media Type',
      exception: 'HttpMediaTypeNotSupportedException',
      message: /text\/plain/,
      path: '/v1/transport-unit',
    });
  });

  it('answers 401 without a token', async () => {
    const response = await request(ctx.app)
      .post('/v1/transport-unit')
      .type('form')
      .send({ transportUnitBK: 'TU', loadUnitType: 'BOX', parts: '2' });

    expect(response.status).toBe(401);
  });

  describe('concurrency', () => {
    it('lets exactly one of two parallel divides of a new TransportUnit win, without duplicate positions', async () => {
      for (let round = 0; round < 8; round++) {
        const bk = unique('RACE');
        const [first, second] = await Promise.all([
          divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts: '3' }),
          divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'TRAY', parts: '4' }),
        ]);

        expect([first.status, second.status].sort()).toEqual([201, 409]);
        const loser = first.status === 409 ? first : second;
        expect(loser.body).toMatchObject({ messageKey: 'owms.wms.inv.tu.alreadyDivided', obj: [bk] });
        const stored = await loadUnitsOf(ctx.db.pool, bk);
        const winnerParts = first.status === 201 ? 3 : 4;
        expect(stored.map((loadUnit) => loadUnit.physicalPosition).sort()).toEqual(
          Array.from({ length: winnerParts }, (_, i) => String(i + 1)).sort(),
        );
        expect(new Set(stored.map((loadUnit) => loadUnit.type)).size).toBe(1);
        expect(await transportUnitCount(ctx.db.pool, bk)).toBe(1);
      }
    });

    it('lets exactly one of two parallel divides of a registered TransportUnit win', async () => {
      for (let round = 0; round < 8; round++) {
        const bk = unique('RACE');
        await ctx.db.pool.query('INSERT INTO transport_unit (bk) VALUES ($1)', [bk]);
        const responses = await Promise.all([
          divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts: '2' }),
          divide(ctx.app, { transportUnitBK: bk, loadUnitType: 'BOX', parts: '2' }),
        ]);

        expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
        expect(await positionsOf(bk)).toEqual(['1', '2']);
      }
    });
  });
});
