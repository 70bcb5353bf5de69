import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku } from '../support/builders.js';
import { stockApi } from '../support/stock.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();
let server: http.Server;

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** As it came over the wire: never decompressed. */
  body: Buffer;
}

function rawGet(path: string, headers: Record<string, string>): Promise<RawAnswer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { Authorization: bearer(), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const PRODUCTS = 1200;

beforeAll(async () => {
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const products = Array.from({ length: PRODUCTS }, () => aProduct({ sku: uniqueSku('GZ') }));
  expect((await stockApi(ctx).post('/v1/products', products)).status).toBe(201);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('gzip for answers over 1 KiB (D33)', () => {
  it('compresses the streamed product list, pages and all, and decompressed it is the plain answer', async () => {
    const plain = await rawGet('/v1/products', { 'Accept-Encoding': 'identity' });
    const zipped = await rawGet('/v1/products', { 'Accept-Encoding': 'gzip, deflate' });

    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect((JSON.parse(plain.body.toString('utf8')) as unknown[]).length).toBeGreaterThanOrEqual(PRODUCTS);
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-length']).toBeUndefined();
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
  });

  it('compresses a single resource over 1 KiB the same way', async () => {
    const page = await rawGet('/v1/products?limit=20', { 'Accept-Encoding': 'identity' });
    const zipped = await rawGet('/v1/products?limit=20', { 'Accept-Encoding': 'gzip' });

    expect(page.body.length).toBeGreaterThan(1024);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(page.body)).toBe(true);
  });

  it('answers gzip to a browser that offers br first, and nothing compressed to a client that offers only br', async () => {
    const plain = await rawGet('/v1/products', { 'Accept-Encoding': 'identity' });
    const browser = await rawGet('/v1/products', { 'Accept-Encoding': 'br, gzip, deflate, zstd' });
    const brotliOnly = await rawGet('/v1/products', { 'Accept-Encoding': 'br' });

    expect(browser.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(browser.body).equals(plain.body)).toBe(true);
    expect(brotliOnly.headers['content-encoding']).toBeUndefined();
    expect(brotliOnly.body.equals(plain.body)).toBe(true);
  });

  it('sends an answer under 1 KiB as it is', async () => {
    const response = await rawGet('/actuator/health', { 'Accept-Encoding': 'gzip' });

    expect(response.status).toBe(200);
    expect(response.body.length).toBeLessThan(1024);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ status: 'UP' });
  });

  it('sends the list uncompressed to a client that names no encoding', async () => {
    const response = await rawGet('/v1/products', {});

    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.body.subarray(0, 1).toString()).toBe('[');
  });

  it('gives a client that names no encoding the Vary of one that asks for identity: on JSON answers, not on a 304', async () => {
    const sku = uniqueSku('GZV');
    expect((await stockApi(ctx).post('/v1/products', aProduct({ sku }))).status).toBe(201);
    const found = await rawGet(`/v1/products?sku=${sku}`, {});
    const tag = found.headers.etag!;
    const cases: [string, Record<string, string>][] = [
      [`/v1/products?sku=${sku}`, {}],
      ['/v1/products?limit=20', {}],
      ['/v1/products/no-such-key', {}],
      [`/v1/products?sku=${sku}`, { 'If-None-Match': tag }],
    ];
    const answers = [];
    for (const [path, headers] of cases) {
      const named = await rawGet(path, headers);
      const identity = await rawGet(path, { ...headers, 'Accept-Encoding': 'identity' });
      expect(named.headers['content-encoding'], path).toBeUndefined();
      expect(named.headers.vary, path).toBe(identity.headers.vary);
      expect(named.body.equals(identity.body), path).toBe(true);
      answers.push([named.status, named.headers.vary]);
    }
    expect(answers).toStrictEqual([
      [200, 'Accept-Encoding'],
      [200, 'Accept-Encoding'],
      [404, 'Accept-Encoding'],
      [304, undefined],
    ]);
  });
});
