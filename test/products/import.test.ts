import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule, uniqueSku, type Json } from '../support/builders.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';
import { BASE_URL, expectedProduct, HAL_JSON_UTF8, HOST, rowCounts, skuCount, UUID } from './product-api.js';

const ctx = useTestApp();

const ndjson = (products: readonly unknown[]): string => products.map((product) => JSON.stringify(product)).join('\n');

function importText(body: string): request.Test {
  return request(ctx.app)
    .post('/v1/products')
    .set('Authorization', bearer())
    .set('Host', HOST)
    .set('Content-Type', 'application/x-ndjson')
    .send(body);
}

interface OutboxRow {
  type: string;
  key: string;
  requestId: string;
  resource: Json;
}

async function eventsOf(requestId: string): Promise<OutboxRow[]> {
  const { rows } = await ctx.db.pool.query<OutboxRow>(
    `SELECT type, resource_key AS key, request_id AS "requestId", resource FROM event_outbox
      WHERE request_id = $1 ORDER BY seq`,
    [requestId],
  );
  return rows;
}

async function eventCount(): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox');
  return rows[0]!.n;
}

function expectValidationError(response: request.Response, problems: readonly [string, string][]): void {
  expect(response.status).toBe(400);
  expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
  expect(response.body).toEqual({
    message: problems.map(([path, message]) => `${path}: ${message}`).join('; '),
    messageKey: 'core.validation.error',
    obj: problems.map(([path]) => path),
    httpStatus: '400',
  });
}

describe('POST /v1/products as NDJSON (issue 14)', () => {
  it('creates one Product per line with 201, stores them as sent and writes one created event each, in line order', async () => {
    const allowed = aProduct();
    const products = [
      aProduct({ label: 'tab\there', description: 'back\\slash\nnew line', details: { erp: { id: 7 } } }),
      aProduct({
        baseUnit: aQuantity(1.123456, 'KG'),
        units: [aProductUnit({ code: 'CRT', quantity: aQuantity(12, 'KG'), details: { n: 1 } })],
      }),
      aProduct({ stackingRules: [aStackingRule(allowed.sku, 3)], stockZone: 'B' }),
      allowed,
    ];

    const response = await importText(`${ndjson(products)}\n\n`).set('X-Request-Id', 'import-four');

    expect(response.status, response.text).toBe(201);
    expect(response.body).toEqual({ created: 4, skipped: 0, updated: 0 });
    expect(response.headers.location).toBeUndefined();
    const events = await eventsOf('import-four');
    expect(events.map((event) => event.type)).toEqual(Array(4).fill('product.event.created'));
    for (const [index, sent] of products.entries()) {
      const found = await request(ctx.app)
        .get(`/v1/products?sku=${encodeURIComponent(sent.sku)}`)
        .set('Authorization', bearer())
        .set('Accept', 'application/json')
        .set('Host', HOST);
      const { _links, ...stored } = found.body as Json;
      expect(_links).toBeDefined();
      expect(stored).toEqual(
        expectedProduct(sent, { pKey: expect.stringMatching(UUID), createDt: expect.any(String) }),
      );
      expect(events[index]).toEqual({
        type: 'product.event.created',
        key: stored.pKey,
        requestId: 'import-four',
        resource: stored,
      });
    }
  });

  it('answers one Product with its Location, as the JSON body does (D8)', async () => {
    const product = aProduct();

    const response = await importText(`${JSON.stringify(product)}\r\n`);

    expect(response.status).toBe(201);
    const stored = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM product WHERE sku = $1', [
      product.sku,
    ]);
    expect(response.headers.location).toBe(`${BASE_URL}/v1/products/${stored.rows[0]!.p_key}`);
  });

  it('answers a malformed line with 400 naming its number, and stores nothing', async () => {
    const fresh = aProduct();
    const before = { rows: await rowCounts(ctx.db.pool), events: await eventCount() };

    const response = await importText(`${JSON.stringify(fresh)}\n{"sku": "X", "baseUnit": \n${ndjson([aProduct()])}`);

    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: /^Request body is not readable: line 2: malformed JSON \(.+\)$/,
      path: '/v1/products',
    });
    expect({ rows: await rowCounts(ctx.db.pool), events: await eventCount() }).toEqual(before);
    expect(await skuCount(ctx.db.pool, [fresh.sku])).toBe(0);
  });

  it('answers a line that names a key twice with 400 naming the line, as the JSON body does', async () => {
    const response = await importText(`${ndjson([aProduct()])}\n{"sku":"A","sku":"B","baseUnit":{"magnitude":1}}`);

    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: 'Request body is not readable: line 2: an object names the key "sku" more than once',
      path: '/v1/products',
    });
  });

  it('answers an invalid Product with 400 core.validation.error naming the line and fields, and stores nothing', async () => {
    const fresh = aProduct();
    const before = await rowCounts(ctx.db.pool);

    const response = await importText(
      ndjson([fresh, aProduct(), aProduct({ baseUnit: aQuantity(-1), stockZone: 'Z' }), aProduct()]),
    );

    expectValidationError(response, [
      ['line 3: baseUnit.magnitude', 'must be greater than 0'],
      ['line 3: stockZone', 'Invalid option: expected one of "A"|"B"|"C"'],
    ]);
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('skips up to 1000 blank lines in a row, counting them, and answers one more with 400 naming its line', async () => {
    const [first, second] = [aProduct(), aProduct()];
    const blank = (count: number): string => ' \r\n'.repeat(count);

    const accepted = await importText(`${JSON.stringify(first)}\n${blank(1000)}${JSON.stringify(second)}\n`);
    const refused = await importText(`${JSON.stringify(aProduct())}\n${blank(1001)}${JSON.stringify(aProduct())}\n`);
    const named = await importText(`${JSON.stringify(aProduct())}\n${blank(3)}{"sku":"N"}\n`);

    expect(accepted.status).toBe(201);
    expect(accepted.body).toEqual({ created: 2, skipped: 0, updated: 0 });
    expect(await skuCount(ctx.db.pool, [first.sku, second.sku])).toBe(2);
    expectServerDeclined(refused, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: 'Request body is not readable: line 1002: more than 1000 blank lines in a row',
      path: '/v1/products',
    });
    expectValidationError(named, [['line 5: baseUnit', 'required']]);
  });

  it('answers a line that is no object, and a body without Products, with 400 core.validation.error', async () => {
    expectValidationError(await importText(`${ndjson([aProduct()])}\n[1]`), [['line 2', 'must be a Product object']]);
    expectValidationError(await importText('\n \n'), [['body', 'must contain at least one Product']]);
  });

  it('answers a stacking rule naming an unknown Product with 400 naming its line (D10)', async () => {
    const response = await importText(ndjson([aProduct(), aProduct({ stackingRules: [aStackingRule('NOWHERE')] })]));

    expectValidationError(response, [['line 2: stackingRules[0].allowedProduct.sku', "unknown product 'NOWHERE'"]]);
  });

  it('answers SKUs sent twice or stored already with 409 alreadyExists naming them in line order, storing nothing', async () => {
    const stored = aProduct();
    await importText(ndjson([stored])).expect(201);
    const twice = uniqueSku('TWICE');
    const fresh = aProduct();
    const before = { rows: await rowCounts(ctx.db.pool), events: await eventCount() };

    const response = await importText(
      ndjson([aProduct({ sku: twice }), fresh, aProduct({ sku: stored.sku }), aProduct({ sku: twice })]),
    );

    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      message: `Products with SKU [${twice}, ${stored.sku}] already exist`,
      messageKey: 'owms.wms.inv.product.alreadyExists',
      obj: [twice, stored.sku],
      httpStatus: '409',
      class: 'String',
    });
    expect({ rows: await rowCounts(ctx.db.pool), events: await eventCount() }).toEqual(before);
  });

  it('answers a line longer than BODY_LIMIT with 413 naming it, and stores nothing', async () => {
    const before = await rowCounts(ctx.db.pool);

    const response = await importText(`${ndjson([aProduct()])}\n{"sku":"${'x'.repeat(1024 ** 2)}"}\n`);

    expectServerDeclined(response, {
      status: 413,
      error: 'Payload Too Large',
      exception: 'PayloadTooLargeException',
      message: 'Request body line 2 exceeds the limit of one resource, 1mb',
      path: '/v1/products',
    });
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  describe('a streamed body', () => {
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      server = http.createServer(ctx.app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    function postStream(lines: AsyncIterable<string> | Iterable<string>): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/v1/products',
            headers: {
              Authorization: bearer(),
              'Content-Type': 'application/x-ndjson',
              'X-Request-Id': 'import-stream',
            },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (piece: string) => (body += piece));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        pipeline(Readable.from(lines), req).catch(reject);
      });
    }

    it('runs IMPORT_MAX_CONCURRENT (2) imports at once and answers one more with 503 and Retry-After', async () => {
      const open = [aProduct(), aProduct()].map((product) => {
        const req = http.request({
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/v1/products',
          headers: { Authorization: bearer(), 'Content-Type': 'application/x-ndjson' },
        });
        const answered = new Promise<number>((resolve, reject) => {
          req.on('response', (res) => {
            res.resume();
            resolve(res.statusCode!);
          });
          req.on('error', reject);
        });
        req.write(`${JSON.stringify(product)}\n`);
        return { req, answered, product };
      });
      for (let copying = 0; copying < 2; await new Promise((resolve) => setTimeout(resolve, 20))) {
        const { rows } = await ctx.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE 'COPY product_import%'`,
        );
        copying = rows[0]!.n;
      }

      const refused = await importText(ndjson([aProduct()]));

      expectServerDeclined(refused, {
        status: 503,
        error: 'Service Unavailable',
        exception: 'TaskRejectedException',
        message: 'Streamed imports are limited to 2 at once on this instance, and all are in use; retry later',
        path: '/v1/products',
      });
      expect(refused.headers['retry-after']).toBe('5');
      for (const { req } of open) req.end();
      expect(await Promise.all(open.map(({ answered }) => answered))).toEqual([201, 201]);
      expect(
        await skuCount(
          ctx.db.pool,
          open.map(({ product }) => product.sku),
        ),
      ).toBe(2);
      expect((await importText(ndjson([aProduct()]))).status).toBe(201);
    });

    it('stores 50,000 Products sent as a stream generated on the fly, each with its event', async () => {
      const count = 50_000;
      const prefix = uniqueSku('STREAM');
      function* lines(): Generator<string> {
        for (let index = 0; index < count; index++) {
          yield `${JSON.stringify({ sku: `${prefix}-${index}`, baseUnit: aQuantity(index + 1, 'PC') })}\n`;
        }
      }

      const response = await postStream(lines());

      expect(response).toEqual({ status: 201, body: `{"created":${count},"skipped":0,"updated":0}` });
      const { rows } = await ctx.db.pool.query<{ n: number; first: string; last: string }>(
        `SELECT count(*)::int AS n, (array_agg(sku ORDER BY id))[1] AS first,
                (array_agg(sku ORDER BY id DESC))[1] AS last
           FROM product WHERE sku LIKE $1`,
        [`${prefix}-%`],
      );
      expect(rows[0]).toEqual({ n: count, first: `${prefix}-0`, last: `${prefix}-${count - 1}` });
      const events = await ctx.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM event_outbox WHERE request_id = 'import-stream'`,
      );
      expect(events.rows[0]!.n).toBe(count);
    }, 120_000);
  });
});
