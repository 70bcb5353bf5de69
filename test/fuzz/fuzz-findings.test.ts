import request, { type Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity, uniqueSku } from '../support/builders.js';
import { expectServerDeclined } from '../support/http.js';
import { givenLocation } from '../support/stock-api.js';
import { bearer } from '../support/tokens.js';
import { incompressibleText } from './evil-values.js';
import { contractProblems } from './response-contract.js';

/** The minimal counterexamples the fuzzing found, kept as plain regression tests. */
const ctx = useTestApp();

const PIECE_UNIT = 'org.openwms.core.units.api.PieceUnit';
const WEIGHT_UNIT = 'org.openwms.core.units.api.WeightUnit';

function send(
  method: 'post' | 'put',
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const test = request(ctx.app)[method](path).set('Authorization', bearer()).set('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(headers)) test.set(name, value);
  return test.send(body);
}

function documentedProblems(method: string, path: string, body: string, response: Response): string[] {
  return contractProblems(
    { method, path, url: path, headers: {}, body },
    { status: response.status, headers: response.headers, text: response.text },
  );
}

describe('request bodies nested deeply (fuzzing: 500 from a stack overflow)', () => {
  it('answers a JSON body nested 5 000 arrays deep with 400 in a documented body, not 500', async () => {
    const body = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;

    const response = await send('put', '/v1/packaging-units/move-between-locations', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('PUT', '/v1/packaging-units/move-between-locations', body, response)).toEqual([]);
  });

  it('answers a field holding arrays nested 5 000 deep with 400 in a documented body, not 500', async () => {
    const body = `[{"locationId":"L-1","erpCode":${'['.repeat(5_000)}${']'.repeat(5_000)}}]`;

    const response = await send('put', '/v1/locations', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('PUT', '/v1/locations', body, response)).toEqual([]);
  });
});

describe('Product units whose quantity is partly invalid (fuzzing: 500 from the unit-kind check)', () => {
  const unitWith = (quantity: object): string =>
    JSON.stringify([{ sku: uniqueSku('FUZZ'), baseUnit: aQuantity(1), units: [{ quantity }] }]);

  it('answers a unit quantity whose @class does not match its unit with 400 naming that field', async () => {
    const body = unitWith({ '@class': 'x', unitType: [PIECE_UNIT, 'PC'], magnitude: 1 });

    const response = await send('post', '/v1/products', body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['[0].units[0].quantity.@class'] });
  });

  it('answers a unit quantity whose unit type class does not match its code with 400 naming that field', async () => {
    const body = unitWith({ unitType: [WEIGHT_UNIT, 'PC'], magnitude: 1 });

    const response = await send('post', '/v1/products', body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      messageKey: 'core.validation.error',
      obj: ['[0].units[0].quantity.unitType'],
    });
  });

  it('answers an update whose unit quantity has a wrong @class with 400 naming that field', async () => {
    const sku = uniqueSku('FUZZ');
    expect((await send('post', '/v1/products', JSON.stringify([{ sku, baseUnit: aQuantity(1) }]))).status).toBe(201);
    const { rows } = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM product WHERE sku = $1', [sku]);
    const body = JSON.stringify({
      pKey: rows[0]!.p_key,
      sku,
      baseUnit: aQuantity(1),
      units: [{ quantity: { '@class': '', unitType: [PIECE_UNIT, 'PC'], magnitude: 1 } }],
    });

    const response = await send('put', '/v1/products', body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['units[0].quantity.@class'] });
  });

  it('names only the baseUnit @class when it does not match, not a second "undefined quantity" problem', async () => {
    const body = JSON.stringify([
      {
        sku: uniqueSku('FUZZ'),
        baseUnit: { '@class': 'x', unitType: [PIECE_UNIT, 'PC'], magnitude: 1 },
        units: [{ quantity: aQuantity(1, 'DOZ') }],
      },
    ]);

    const response = await send('post', '/v1/products', body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['[0].baseUnit.@class'] });
  });
});

describe('compressed request bodies that do not decompress (fuzzing: 500 from the body parser)', () => {
  it.each(['gzip', 'deflate', 'br'])(
    'answers Content-Encoding %s with a body that is not compressed with 400 HttpMessageNotReadableException',
    async (encoding) => {
      const response = await send('put', '/v1/packaging-units/move-between-locations', 'abc', {
        'Content-Encoding': encoding,
      });

      expectServerDeclined(response, {
        status: 400,
        error: 'Bad Request',
        exception: 'HttpMessageNotReadableException',
        message: /not readable/i,
        path: '/v1/packaging-units/move-between-locations',
      });
    },
  );

  it('answers a gzip form body that is not compressed with 400 HttpMessageNotReadableException', async () => {
    const response = await request(ctx.app)
      .post('/v1/transport-unit')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('Content-Encoding', 'gzip')
      .send('transportUnitBK=TU-1&loadUnitType=BOX&parts=1');

    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: /not readable/i,
      path: '/v1/transport-unit',
    });
  });
});

describe('business keys longer than an index row (fuzzing: 500 from PostgreSQL, 54000)', () => {
  // 3 000 characters that do not compress: more than a btree index row holds (2 704 bytes).
  const longKey = incompressibleText(3_000);

  it('answers a Location whose locationId is 3 000 characters long with 400, not 500', async () => {
    const body = JSON.stringify([{ locationId: longKey }]);

    const response = await send('put', '/v1/locations', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('PUT', '/v1/locations', body, response)).toEqual([]);
  });

  it('answers a Location whose erpCode is 3 000 characters long with 400, not 500', async () => {
    const body = JSON.stringify([{ locationId: uniqueSku('LOC'), erpCode: longKey }]);

    const response = await send('put', '/v1/locations', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('PUT', '/v1/locations', body, response)).toEqual([]);
  });

  it('answers a LocationGroup whose name is 3 000 characters long with 400, not 500', async () => {
    const body = JSON.stringify([{ name: longKey }]);

    const response = await send('put', '/v1/location-groups', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('PUT', '/v1/location-groups', body, response)).toEqual([]);
  });

  it('answers a TransportUnit whose transportUnitBK is 3 000 characters long with 400, not 500', async () => {
    const { locationId } = await givenLocation(ctx.app);
    const body = JSON.stringify({
      transportUnitBK: longKey,
      transportUnitType: 'EURO',
      actualLocation: { locationId },
    });

    const response = await send('post', '/v1/transport-units', body);

    expect(response.status).toBe(400);
    expect(documentedProblems('POST', '/v1/transport-units', body, response)).toEqual([]);
  });

  it('answers a divide of a 3 000-character transportUnitBK with 400, not 500', async () => {
    const response = await request(ctx.app)
      .post('/v1/transport-unit')
      .set('Authorization', bearer())
      .type('form')
      .send({ transportUnitBK: longKey, loadUnitType: 'BOX', parts: '1' });

    expect(response.status).toBe(400);
  });

  it('refuses a 100 000-character transportUnitBK with 400 instead of echoing it in a 100 kB Location header', async () => {
    const { locationId } = await givenLocation(ctx.app);
    const body = JSON.stringify({
      transportUnitBK: 'B'.repeat(100_000),
      transportUnitType: 'EURO',
      actualLocation: { locationId },
    });

    // Today supertest cannot even read the answer: "Parse Error: Header overflow".
    const response = await send('post', '/v1/transport-units', body);

    expect(response.status).toBe(400);
  });
});
