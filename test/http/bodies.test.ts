import { readdir, readlink } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku, type Json } from '../support/builders.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 15: how request bodies are read. Small limits make the sizes exact and cheap: one resource up to 4 KiB,
 * a bulk operation up to 16 KiB, a streamed import (issue 14) up to 64 KiB.
 */
const LIMIT = 4 * 1024;
const BULK_LIMIT = 16 * 1024;
const BUDGET_WAIT_MS = 3000;
const IMPORT_LIMIT = 64 * 1024;
const ctx = useTestApp({
  BODY_LIMIT: '4kb',
  BULK_BODY_LIMIT: '16kb',
  IMPORT_BODY_LIMIT: '64kb',
  BODY_BUDGET_WAIT_MS: String(BUDGET_WAIT_MS),
});

let baseUrl: string;
let server: http.Server;

beforeAll(async () => {
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** JSON text padded with trailing spaces (still the same JSON) to exactly `size` bytes. */
function padded(value: unknown, size: number): string {
  const text = JSON.stringify(value);
  const missing = size - Buffer.byteLength(text);
  if (missing < 0) throw new Error(`the value alone takes ${Buffer.byteLength(text)} bytes`);
  return text + ' '.repeat(missing);
}

/** Sends the body as it is (superagent would otherwise write a Buffer as JSON of its bytes). */
function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): request.Test {
  const test = request(ctx.app).post(path).set('Authorization', bearer()).set('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(headers)) test.set(name, value);
  return test.serialize((raw: unknown) => raw as string).send(body);
}

function put(path: string, body: string): request.Test {
  return request(ctx.app).put(path).set('Authorization', bearer()).set('Content-Type', 'application/json').send(body);
}

async function productsLike(prefix: string): Promise<number> {
  const result = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku LIKE $1', [
    `${prefix}%`,
  ]);
  return result.rows[0]!.n;
}

async function storedProduct(pKey: string): Promise<{ description: string | null; ol: number }> {
  const result = await ctx.db.pool.query<{ description: string | null; ol: number }>(
    'SELECT description, ol FROM product WHERE p_key = $1',
    [pKey],
  );
  return result.rows[0]!;
}

async function createOne(product: Json): Promise<string> {
  const response = await post('/v1/products', JSON.stringify([product])).expect(201);
  return String(response.headers.location).split('/').pop()!;
}

function expectTooLarge(response: request.Response, limit: string, path: string): void {
  expectServerDeclined(response, {
    status: 413,
    error: 'Payload Too Large',
    exception: 'PayloadTooLargeException',
    message: `Request body exceeds the limit of ${limit}`,
    path,
  });
}

function expectUnreadable(response: request.Response, message: string, path: string): void {
  expectServerDeclined(response, {
    status: 400,
    error: 'Bad Request',
    exception: 'HttpMessageNotReadableException',
    message: `Request body is not readable: ${message}`,
    path,
  });
}

interface RawAnswer {
  status: number;
  body?: Record<string, unknown>;
}

interface OpenRequest {
  readonly req: http.ClientRequest;
  readonly answer: Promise<RawAnswer>;
}

/** A POST written by hand, left open: with Transfer-Encoding chunked unless the headers set a length. */
function openRequest(path: string, headers: Record<string, string> = {}): OpenRequest {
  const req = http.request(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: bearer(), 'Content-Type': 'application/json', ...headers },
  });
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ...(text && { body: JSON.parse(text) as Record<string, unknown> }) }),
      );
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { req, answer };
}

/** The chunks sent one by one; a request that declares a length keeps it and stays open after them. */
function rawRequest(path: string, headers: Record<string, string>, chunks: readonly Buffer[]): Promise<RawAnswer> {
  const { req, answer } = openRequest(path, headers);
  for (const chunk of chunks) req.write(chunk);
  if (headers['Content-Length'] === undefined) req.end();
  return answer;
}

/** Whether the promise is still pending a little later. */
async function stillPending(promise: Promise<unknown>, ms = 300): Promise<boolean> {
  const pending = Symbol('pending');
  const first = await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(pending), ms))]);
  return first === pending;
}

describe('body limits per operation (issue 15)', () => {
  it('reads the body of an operation on one resource up to BODY_LIMIT exactly, and refuses one byte more with 413', async () => {
    const pKey = await createOne(aProduct({ description: 'before' }));
    const { ol } = await storedProduct(pKey);
    const update = (description: string): Json => ({ ...aProduct({ description }), pKey, ol });

    const over = await put('/v1/products', padded(update('over'), LIMIT + 1));
    expectTooLarge(over, '4kb', '/v1/products');
    expect(await storedProduct(pKey)).toEqual({ description: 'before', ol });

    const atLimit = await put('/v1/products', padded(update('at the limit'), LIMIT));
    expect(atLimit.status).toBe(200);
    expect(await storedProduct(pKey)).toEqual({ description: 'at the limit', ol: ol + 1 });
  });

  it('reads a bulk body up to BULK_BODY_LIMIT exactly, and refuses one byte more with 413, storing nothing', async () => {
    const prefix = uniqueSku('BULK-LIMIT');
    const products = Array.from({ length: 40 }, (_, index) => aProduct({ sku: `${prefix}-${index}` }));
    expect(JSON.stringify(products).length).toBeGreaterThan(LIMIT);

    const over = await post('/v1/products', padded(products, BULK_LIMIT + 1));
    expectTooLarge(over, '16kb', '/v1/products');
    expect(await productsLike(prefix)).toBe(0);

    const atLimit = await post('/v1/products', padded(products, BULK_LIMIT));
    expect(atLimit.status).toBe(201);
    expect(await productsLike(prefix)).toBe(40);
  });

  it('refuses a Product of a bulk body larger than BODY_LIMIT with 413 naming it, storing nothing (issue 26)', async () => {
    const prefix = uniqueSku('BIG-ELEMENT');
    const products = [
      aProduct({ sku: `${prefix}-0` }),
      aProduct({ sku: `${prefix}-1`, details: { text: 'x'.repeat(LIMIT) } }),
    ];

    const response = await post('/v1/products', JSON.stringify(products));

    expectServerDeclined(response, {
      status: 413,
      error: 'Payload Too Large',
      exception: 'PayloadTooLargeException',
      message: 'Request body element [1] exceeds the limit of one resource, 4kb',
      path: '/v1/products',
    });
    expect(await productsLike(prefix)).toBe(0);
  });

  it('refuses one Product sent as a plain object larger than BODY_LIMIT with 413, though under the bulk limit', async () => {
    const sku = uniqueSku('BIG-OBJECT');

    const response = await post(
      '/v1/products',
      JSON.stringify(aProduct({ sku, details: { text: 'x'.repeat(LIMIT) } })),
    );

    expectServerDeclined(response, {
      status: 413,
      error: 'Payload Too Large',
      exception: 'PayloadTooLargeException',
      message: 'Request body value exceeds the limit of one resource, 4kb',
      path: '/v1/products',
    });
    expect(await productsLike(sku)).toBe(0);
  });

  it('lets go of every spool file of the bulk bodies it has answered', async () => {
    const spoolFiles = async (): Promise<string[]> => {
      const targets = await Promise.all(
        (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
      );
      return targets.filter((target) => target.includes('inventory-rows-'));
    };
    const prefix = uniqueSku('SPOOL');
    for (let index = 0; index < 5; index++) {
      expect((await post('/v1/products', JSON.stringify([aProduct({ sku: `${prefix}-${index}` })]))).status).toBe(201);
      expect((await post('/v1/products', JSON.stringify([aProduct({ sku: `${prefix}-${index}` })]))).status).toBe(409);
      expect((await post('/v1/products', '[{"sku":1}]')).status).toBe(400);
    }

    // A spool is let go once its answer has been sent, which the client may see a moment before.
    await vi.waitFor(async () => expect(await spoolFiles()).toEqual([]));
  });

  it('answers a declared Content-Length over the limit with 413 before the body is sent', async () => {
    const answer = await rawRequest('/v1/products', { 'Content-Length': String(BULK_LIMIT + 1) }, [
      Buffer.from('[{"sku":'),
    ]);

    expect(answer).toEqual({
      status: 413,
      body: expect.objectContaining({ message: 'Request body exceeds the limit of 16kb', path: '/v1/products' }),
    });
  });

  it('counts a chunked body without a length while reading it, and answers 413 beyond the limit', async () => {
    const prefix = uniqueSku('CHUNKED');
    const chunk = Buffer.from(`[${JSON.stringify(aProduct({ sku: prefix }))}${' '.repeat(1023)}`.slice(0, 1024));
    const answer = await rawRequest('/v1/products', {}, [chunk, ...Array(16).fill(Buffer.alloc(1024, ' '))]);

    expect(answer.status).toBe(413);
    expect(answer.body?.message).toBe('Request body exceeds the limit of 16kb');
    expect(await productsLike(prefix)).toBe(0);
  });

  it('counts a compressed body after decompression: a small gzip that inflates beyond the limit is a 413', async () => {
    const prefix = uniqueSku('GZIP-BOMB');
    const inflated = padded([aProduct({ sku: prefix })], 1024 * 1024);
    const compressed = gzipSync(inflated);
    expect(compressed.length).toBeLessThan(LIMIT);

    const response = await post('/v1/products', compressed, { 'Content-Encoding': 'gzip' });

    expectTooLarge(response, '16kb', '/v1/products');
    expect(await productsLike(prefix)).toBe(0);
  });

  it('reads a compressed body within the limit', async () => {
    const sku = uniqueSku('GZIP');
    const response = await post('/v1/products', gzipSync(JSON.stringify([aProduct({ sku })])), {
      'Content-Encoding': 'gzip',
    });

    expect(response.status).toBe(201);
    expect(await productsLike(sku)).toBe(1);
  });
});

describe('the limit of a streamed import (IMPORT_BODY_LIMIT, issue 14)', () => {
  const ndjsonOf = (prefix: string, count: number): string =>
    Array.from({ length: count }, (_, index) => `${JSON.stringify(aProduct({ sku: `${prefix}-${index}` }))}\n`).join(
      '',
    );
  const NDJSON = { 'Content-Type': 'application/x-ndjson' };

  it('reads an NDJSON body far beyond BULK_BODY_LIMIT, up to IMPORT_BODY_LIMIT', async () => {
    const prefix = uniqueSku('IMPORT-LIMIT');
    const body = ndjsonOf(prefix, 300);
    expect(body.length).toBeGreaterThan(2 * BULK_LIMIT);
    expect(body.length).toBeLessThan(IMPORT_LIMIT);

    const response = await post('/v1/products', body, NDJSON);

    expect(response.status).toBe(201);
    expect(await productsLike(prefix)).toBe(300);
  });

  it('counts a compressed NDJSON body after decompression, and answers 413 beyond the limit, storing nothing', async () => {
    const prefix = uniqueSku('IMPORT-GZIP');
    const compressed = gzipSync(ndjsonOf(prefix, 1000));
    expect(compressed.length).toBeLessThan(BULK_LIMIT);

    const response = await post('/v1/products', compressed, { ...NDJSON, 'Content-Encoding': 'gzip' });

    expectTooLarge(response, '64kb', '/v1/products');
    expect(await productsLike(prefix)).toBe(0);
  });

  it('answers a declared Content-Length over IMPORT_BODY_LIMIT with 413 before the body is sent', async () => {
    const answer = await rawRequest('/v1/products', { ...NDJSON, 'Content-Length': String(IMPORT_LIMIT + 1) }, [
      Buffer.from('{"sku":'),
    ]);

    expect(answer).toEqual({
      status: 413,
      body: expect.objectContaining({ message: 'Request body exceeds the limit of 64kb', path: '/v1/products' }),
    });
  });
});

describe('bytes that are no UTF-8 (issue 15: once stored as U+FFFD)', () => {
  const PIECE = '"baseUnit":{"unitType":["org.openwms.core.units.api.PieceUnit","PC"],"magnitude":1}';

  /** A one-product body with `bytes` inside the SKU (after `prefix`) or inside a details value. */
  function bodyWith(prefix: string, where: 'sku' | 'details', bytes: readonly number[]): Buffer {
    const raw = Buffer.from(bytes);
    return where === 'sku'
      ? Buffer.concat([Buffer.from(`[{"sku":"${prefix}`), raw, Buffer.from(`",${PIECE}}]`)])
      : Buffer.concat([Buffer.from(`[{"sku":"${prefix}",${PIECE},"details":{"note":"`), raw, Buffer.from('"}}]')]);
  }

  it.each([
    ['a lead byte followed by no continuation (0xC3 0x28)', 'sku', [0xc3, 0x28]],
    ['0xFF, which UTF-8 never uses', 'sku', [0xff]],
    ['0xC3 0x28', 'details', [0xc3, 0x28]],
    ['0xFF', 'details', [0xff]],
    ['a surrogate encoded as UTF-8 (0xED 0xA0 0x80)', 'details', [0xed, 0xa0, 0x80]],
    ['an overlong encoding of "/" (0xC0 0xAF)', 'sku', [0xc0, 0xaf]],
  ] as const)('refuses %s in the %s with 400 and stores nothing', async (_what, where, bytes) => {
    const prefix = uniqueSku('UTF8');

    const response = await post('/v1/products', bodyWith(prefix, where, bytes));

    expectUnreadable(response, 'the body is not valid utf-8', '/v1/products');
    expect(await productsLike(prefix)).toBe(0);
  });

  it('refuses a body that ends inside a character', async () => {
    const body = Buffer.concat([Buffer.from(`[${JSON.stringify(aProduct())}]`), Buffer.from([0xe2, 0x82])]);

    expectUnreadable(await post('/v1/products', body), 'the body is not valid utf-8', '/v1/products');
  });

  it('keeps characters whose bytes arrive split across chunks of a long body', async () => {
    // About 3.5 KB: one Product of a bulk stays within the limit of one resource (issue 26).
    const description = 'Größe 10 € / 日本 — 🚚 '.repeat(110);
    const sku = uniqueSku('SPLIT');
    const body = Buffer.from(JSON.stringify([aProduct({ sku, description })]));
    // Cut in the middle of the € sign's three bytes, and again in the middle of the truck's four.
    const euro = body.indexOf('€') + 1;
    const truck = body.indexOf('🚚', 3000) + 2;
    const answer = await rawRequest('/v1/products', {}, [
      body.subarray(0, euro),
      body.subarray(euro, truck),
      body.subarray(truck),
    ]);

    expect(answer).toEqual({ status: 201 });
    const stored = await ctx.db.pool.query('SELECT description FROM product WHERE sku = $1', [sku]);
    expect(stored.rows).toEqual([{ description }]);
  });

  it('decodes a body in the charset it declares, as before', async () => {
    const sku = uniqueSku('LATIN1');
    const body = Buffer.from(JSON.stringify([aProduct({ sku, description: 'café' })]), 'latin1');

    const response = await post('/v1/products', body, { 'Content-Type': 'application/json; charset=iso-8859-1' });

    expect(response.status).toBe(201);
    const stored = await ctx.db.pool.query('SELECT description FROM product WHERE sku = $1', [sku]);
    expect(stored.rows).toEqual([{ description: 'café' }]);
  });

  it('refuses a charset it does not know with 400', async () => {
    const response = await post('/v1/products', JSON.stringify([aProduct()]), {
      'Content-Type': 'application/json; charset=klingon',
    });

    expectUnreadable(response, 'unsupported charset "KLINGON"', '/v1/products');
  });
});

describe('the body budget: what the bodies read and handled at once may add up to (issue 15)', () => {
  const productBody = (sku: string): string => JSON.stringify([aProduct({ sku })]);
  // Answered as soon as it is read, without the database: a 400 that shows when the body was read.
  const unreadable = (): Promise<number> => post('/v1/products', '[{').then((response) => response.status);

  it('makes a body wait while the bodies in flight fill the budget, and reads it once they are answered', async () => {
    const sku = uniqueSku('BUDGET-A');
    // Chunked, so it counts at the whole bulk limit, which is the whole budget here.
    const holding = openRequest('/v1/products');
    holding.req.write(productBody(sku).slice(0, 10));
    const waiting = unreadable();

    expect(await stillPending(waiting, 1000)).toBe(true);

    holding.req.end(productBody(sku).slice(10));
    expect(await holding.answer).toEqual({ status: 201 });
    expect(await waiting).toBe(400);
    expect(await productsLike(sku)).toBe(1);
  });

  it('answers a bulk body that waited BODY_BUDGET_WAIT_MS for its turn with 503 and Retry-After', async () => {
    const sku = uniqueSku('BUDGET-W');
    const holding = openRequest('/v1/products');
    holding.req.write(productBody(sku).slice(0, 10));
    const started = Date.now();

    const refused = await post('/v1/products', '[{');

    expect(Date.now() - started).toBeGreaterThanOrEqual(BUDGET_WAIT_MS - 100);
    expectServerDeclined(refused, {
      status: 503,
      error: 'Service Unavailable',
      exception: 'TooManyLargeBodiesException',
      message: 'Too many large request bodies are being handled; retry later',
      path: '/v1/products',
    });
    expect(refused.headers['retry-after']).toBe('5');
    holding.req.end(productBody(sku).slice(10));
    expect(await holding.answer).toEqual({ status: 201 });
  });

  it('reads the body of an operation on one resource at once while bulk bodies fill the budget', async () => {
    const sku = uniqueSku('BUDGET-S');
    const holding = openRequest('/v1/products');
    holding.req.write(productBody(sku).slice(0, 10));

    const single = put('/v1/products', '{');

    expect(await stillPending(single, 1000)).toBe(false);
    expect((await single).status).toBe(400);
    holding.req.end(productBody(sku).slice(10));
    expect(await holding.answer).toEqual({ status: 201 });
  });

  it('gives up the place of a client that leaves while waiting', async () => {
    const sku = uniqueSku('BUDGET-C');
    const holding = openRequest('/v1/products');
    holding.req.write(productBody(sku).slice(0, 10));
    const leaving = openRequest('/v1/products', { 'Content-Length': String(BULK_LIMIT) });
    leaving.answer.catch(() => undefined);
    const waiting = unreadable();
    expect(await stillPending(waiting)).toBe(true);

    leaving.req.destroy();
    holding.req.end(productBody(sku).slice(10));

    expect(await holding.answer).toEqual({ status: 201 });
    expect(await waiting).toBe(400);
  });

  it.each<[string, Record<string, string>]>([
    ['plain', {}],
    ['gzip-compressed', { 'Content-Encoding': 'gzip' }],
  ])('gives back the share of a %s body whose client leaves in the middle of it', async (_what, headers) => {
    const leaving = openRequest('/v1/products', headers);
    leaving.answer.catch(() => undefined);
    leaving.req.write(headers['Content-Encoding'] ? gzipSync('[{"sku":').subarray(0, 12) : '[{"sku":');
    await new Promise((resolve) => setTimeout(resolve, 100));
    leaving.req.destroy();

    // The leaving body counted at the whole budget: this one is read only if its share came back.
    expect(await unreadable()).toBe(400);
  });

  it('reads bodies that fit in the budget together at once', async () => {
    const bodies = Array.from({ length: 4 }, () => padded([aProduct({ sku: uniqueSku('BUDGET-F') })], LIMIT));
    const started = bodies.map(() => openRequest('/v1/products', { 'Content-Length': String(LIMIT) }));
    started.forEach(({ req }, index) => req.write(bodies[index]!.slice(0, 100)));

    // Four times the limit of one is the budget: the last one is read while the first three are still open.
    const last = started.pop()!;
    last.req.end(bodies[3]!.slice(100));
    expect(await last.answer).toEqual({ status: 201 });
    expect(await stillPending(Promise.race(started.map(({ answer }) => answer)))).toBe(true);

    started.forEach(({ req }, index) => req.end(bodies[index]!.slice(100)));
    expect(await Promise.all(started.map(({ answer }) => answer))).toEqual(Array(3).fill({ status: 201 }));
  });
});
