import request, { type Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct } from '../support/builders.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 37 (D41): behind TRUST_PROXY the protocol and host of every href and Location come from X-Forwarded-Proto
 * and X-Forwarded-Host, which were taken as they came (`https://evil.example/phish?:` as a protocol). Host values
 * that are no host (`localhost:99999`, `127.999.999.999`) were echoed with the default settings too.
 */
const INDEX = '/v1/products/index';

const productsHref = (response: Response): string | undefined =>
  (response.body as { _links?: Record<string, { href: string }> })._links?.['products-findall']?.href;

const refused = (response: Response, exception: string, message: string, path = INDEX): void =>
  expectServerDeclined(response, { status: 400, error: 'Bad Request', exception, message, path });

const refusedHost = (response: Response, path = INDEX): void =>
  refused(response, 'InvalidHostHeaderException', 'The Host header names no host this service answers for', path);

describe('with the default settings', () => {
  const ctx = useTestApp({ ALLOWED_HOSTS: undefined });

  it.each(['localhost:99999', 'localhost:0', '127.999.999.999', '127.0.0.256:8080', '127.1', '[::1]:65536'])(
    'refuses the Host %s, which names no host, with 400',
    async (host) => {
      refusedHost(await request(ctx.app).get(INDEX).set('Authorization', bearer()).set('Host', host));
    },
  );

  it('still answers the highest port and the loopback addresses', async () => {
    for (const host of ['localhost:65535', '127.255.255.255', '127.0.0.1:1']) {
      const response = await request(ctx.app).get(INDEX).set('Authorization', bearer()).set('Host', host);
      expect(response.status).toBe(200);
      expect(productsHref(response)).toBe(`http://${host}/v1/products`);
    }
  });
});

describe('with TRUST_PROXY=true', () => {
  const ctx = useTestApp({ TRUST_PROXY: 'true' });
  const forwarded = (proto: string, host = 'shop.example') =>
    request(ctx.app)
      .get(INDEX)
      .set('Authorization', bearer())
      .set('X-Forwarded-Proto', proto)
      .set('X-Forwarded-Host', host);

  it.each(['https', 'http', 'HTTPS', 'https, http'])('builds hrefs from X-Forwarded-Proto %s', async (proto) => {
    const response = await forwarded(proto);
    expect(response.status).toBe(200);
    expect(productsHref(response)).toBe(`${proto.split(',')[0]!.toLowerCase()}://shop.example/v1/products`);
  });

  it.each(['https://evil.example/phish?', 'javascript', 'ftp', 'https:', 'http s'])(
    'refuses X-Forwarded-Proto %j with 400',
    async (proto) => {
      refused(await forwarded(proto), 'InvalidForwardedHeaderException', 'X-Forwarded-Proto must be http or https');
    },
  );

  it('refuses a create with a forged X-Forwarded-Proto: no Location, nothing created', async () => {
    const product = aProduct();
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('X-Forwarded-Proto', 'javascript:alert(1)//')
      .send(product);
    expect(response.headers.location).toBeUndefined();
    refused(response, 'InvalidForwardedHeaderException', 'X-Forwarded-Proto must be http or https', '/v1/products');
    const { rowCount } = await ctx.db.pool.query('SELECT 1 FROM product WHERE sku = $1', [product.sku]);
    expect(rowCount).toBe(0);
  });

  it.each(['shop.example/phish?x=', 'shop.example:99999', '127.999.999.999', 'a@shop.example', 'evil.example'])(
    'refuses X-Forwarded-Host %s with 400',
    async (host) => {
      refusedHost(await forwarded('https', host));
    },
  );

  it('answers a listed X-Forwarded-Host with a port', async () => {
    const response = await forwarded('https', 'shop.example:8443');
    expect(response.status).toBe(200);
    expect(productsHref(response)).toBe('https://shop.example:8443/v1/products');
  });
});
