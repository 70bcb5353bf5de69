import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined } from '../support/api-errors.js';
import {
  BASE,
  get,
  givenDivided,
  givenProduct,
  givenTransportUnitWithOneLoadUnit,
  HAL_JSON_UTF8,
  JSON_UTF8,
  loadUnitsOf,
  put,
  PIECE,
  TIMESTAMP,
  unique,
  UNITS_PKG,
  UUID,
} from './load-unit-api.js';

const ctx = useTestApp();

const LOAD_UNIT_FIELDS = ['pKey', 'transportUnitBK', 'physicalPosition', 'type', 'locked', 'ol', 'createDt'];

async function aDividedLoadUnit(parts = 2): Promise<{ bk: string; pKey: string }> {
  const bk = unique('TU');
  await givenDivided(ctx.app, bk, parts, 'BOX');
  const [first] = await loadUnitsOf(ctx.db.pool, bk);
  return { bk, pKey: first!.pKey };
}

describe('GET /v1/load-units/{pKey} (lu-findbypkey)', () => {
  it('answers 200 HAL with the LoadUnit fields in the spec order and links to itself and its PackagingUnits', async () => {
    const { bk, pKey } = await aDividedLoadUnit();

    const response = await get(ctx.app, `/v1/load-units/${pKey}`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      pKey,
      transportUnitBK: bk,
      physicalPosition: '1',
      type: 'BOX',
      locked: false,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: {
        self: { href: `${BASE}/v1/load-units/${pKey}` },
        'packaging-units': { href: `${BASE}/v1/load-units/${pKey}/packaging-units` },
      },
    });
    expect(pKey).toMatch(UUID);
    expect(Object.keys(response.body as object)).toEqual([...LOAD_UNIT_FIELDS, '_links']);
  });

  it('embeds the assigned Product partially, between locked and ol, and links to it', async () => {
    const { pKey } = await aDividedLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    expect((await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE })).status).toBe(200);

    const response = await get(ctx.app, `/v1/load-units/${pKey}`);

    expect(response.status).toBe(200);
    expect(Object.keys(response.body as object)).toEqual([
      'pKey',
      'transportUnitBK',
      'physicalPosition',
      'type',
      'locked',
      'product',
      'ol',
      'createDt',
      '_links',
    ]);
    expect(response.body.product).toEqual({
      pKey: product.pKey,
      sku: product.sku,
      baseUnit: { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 1 },
      availabilityState: 'AVAILABLE',
    });
    expect(response.body.ol).toBe(1);
    expect(response.body._links).toEqual({
      self: { href: `${BASE}/v1/load-units/${pKey}` },
      'packaging-units': { href: `${BASE}/v1/load-units/${pKey}/packaging-units` },
      product: { href: `${BASE}/v1/products/${product.pKey}` },
    });
  });

  it('shows a stored label and dimension in their places', async () => {
    const { pKey } = await aDividedLoadUnit();
    await ctx.db.pool.query(
      `UPDATE load_unit SET label = 'LBL-1', dimension = '{"height":1.5,"width":2,"length":3}' WHERE p_key = $1`,
      [pKey],
    );

    const response = await get(ctx.app, `/v1/load-units/${pKey}`);

    expect(Object.keys(response.body as object)).toEqual([
      'pKey',
      'transportUnitBK',
      'physicalPosition',
      'label',
      'type',
      'locked',
      'dimension',
      'ol',
      'createDt',
      '_links',
    ]);
    expect(response.body).toMatchObject({ label: 'LBL-1', dimension: { height: 1.5, width: 2, length: 3 } });
  });

  it('answers 404 owms.wms.inv.lu.pKeyNotExists for an unknown pKey', async () => {
    const pKey = '7b0f8e3c-1d2a-4c5b-9e8f-0a1b2c3d4e5f';
    const response = await get(ctx.app, `/v1/load-units/${pKey}`);

    expectApiDeclined(response, {
      status: 404,
      message: `LoadUnit with pKey [${pKey}] does not exist`,
      messageKey: 'owms.wms.inv.lu.pKeyNotExists',
      obj: [pKey],
      class: 'String',
    });
  });

  it('answers a malformed pKey as an unknown one: 404, never 400 or 500', async () => {
    const response = await get(ctx.app, '/v1/load-units/not-a-uuid');

    expectApiDeclined(response, {
      status: 404,
      message: 'LoadUnit with pKey [not-a-uuid] does not exist',
      messageKey: 'owms.wms.inv.lu.pKeyNotExists',
      obj: ['not-a-uuid'],
      class: 'String',
    });
  });

  it('finds a pKey written in upper case', async () => {
    const { pKey } = await aDividedLoadUnit();

    const response = await get(ctx.app, `/v1/load-units/${pKey.toUpperCase()}`);

    expect(response.status).toBe(200);
    expect(response.body.pKey).toBe(pKey);
  });

  it('still serves the LoadUnit index at /v1/load-units/index', async () => {
    const response = await get(ctx.app, '/v1/load-units/index');

    expect(response.status).toBe(200);
    expect(Object.keys(response.body._links as object)).toContain('lu-divide');
  });
});

describe('GET /v1/transport-units/{transportUnitBK}/load-units', () => {
  it("answers the TransportUnit's LoadUnits as a plain JSON array without links, in numeric position order", async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 12, 'BOX');

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    const body = response.body as Record<string, unknown>[];
    expect(body.map((loadUnit) => loadUnit.physicalPosition)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
      '11',
      '12',
    ]);
    const stored = await loadUnitsOf(ctx.db.pool, bk);
    expect(body[0]).toEqual({
      pKey: stored[0]!.pKey,
      transportUnitBK: bk,
      physicalPosition: '1',
      type: 'BOX',
      locked: false,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
    });
    expect(Object.keys(body[0]!)).toEqual(LOAD_UNIT_FIELDS);
  });

  it('orders numeric positions before other ones, and embeds each LoadUnit’s Product', async () => {
    const bk = unique('TU');
    await givenTransportUnitWithOneLoadUnit(ctx.db.pool, bk, 'B');
    await givenDivided(ctx.app, bk, 10, 'BOX');
    const stored = await loadUnitsOf(ctx.db.pool, bk);
    const tenth = stored.find((loadUnit) => loadUnit.physicalPosition === '10')!;
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    expect((await put(ctx.app, `/v1/load-units/${tenth.pKey}`, { sku: product.sku, baseUnit: PIECE })).status).toBe(
      200,
    );

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units`);

    const body = response.body as Record<string, unknown>[];
    expect(body.map((loadUnit) => loadUnit.physicalPosition)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
      'B',
    ]);
    expect(body[9]).toMatchObject({ pKey: tenth.pKey, product: { pKey: product.pKey, sku: product.sku } });
    expect(body.filter((loadUnit) => 'product' in loadUnit)).toHaveLength(1);
    expect(body.every((loadUnit) => !('_links' in loadUnit))).toBe(true);
  });

  it('answers HAL when application/hal+json is asked for: the LoadUnits embedded with their links, and self', async () => {
    const bk = `${unique('TU')} /ä`;
    await givenDivided(ctx.app, bk, 2, 'BOX');
    const [first, second] = await loadUnitsOf(ctx.db.pool, bk);
    const path = `/v1/transport-units/${encodeURIComponent(bk)}/load-units`;

    const response = await get(ctx.app, path).set('Accept', 'application/hal+json');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      _embedded: {
        'load-units': [
          expect.objectContaining({
            pKey: first!.pKey,
            physicalPosition: '1',
            _links: {
              self: { href: `${BASE}/v1/load-units/${first!.pKey}` },
              'packaging-units': { href: `${BASE}/v1/load-units/${first!.pKey}/packaging-units` },
            },
          }),
          expect.objectContaining({ pKey: second!.pKey, physicalPosition: '2' }),
        ],
      },
      _links: { self: { href: `${BASE}${path}` } },
    });
  });

  it('answers an empty array for a TransportUnit without LoadUnits', async () => {
    const bk = unique('TU');
    await ctx.db.pool.query('INSERT INTO transport_unit (bk) VALUES ($1)', [bk]);

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('answers 404 owms.wms.inv.tu.bkNotExists for an unknown TransportUnit', async () => {
    const bk = unique('NOPE');
    const response = await get(ctx.app, `/v1/transport-units/${bk}/load-units`);

    expectApiDeclined(response, {
      status: 404,
      message: `TransportUnit with business key [${bk}] does not exist`,
      messageKey: 'owms.wms.inv.tu.bkNotExists',
      obj: [bk],
      class: 'String',
    });
  });

  it('finds a TransportUnit whose business key needs URL encoding', async () => {
    const bk = `${unique('TU')} /ä`;
    await givenDivided(ctx.app, bk, 2);

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units`);

    expect(response.status).toBe(200);
    expect((response.body as { transportUnitBK: string }[]).map((loadUnit) => loadUnit.transportUnitBK)).toEqual([
      bk,
      bk,
    ]);
  });
});
