import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 15: hrefs were built from whatever Host a client sent, even without TRUST_PROXY, so one request could
 * make a cache in front hand out links to another site.
 */
const INDEX = '/v1/products/index';

function indexHref(app: Parameters<typeof request>[0], host?: string): Promise<{ status: number; href?: string }> {
  const call = request(app).get(INDEX).set('Authorization', bearer());
  return (host === undefined ? call : call.set('Host', host)).then((response) => ({
    status: response.status,
    href: (response.body as { _links?: Record<string, { href: string }> })._links?.['products-findall']?.href,
  }));
}

describe('without PUBLIC_BASE_URL or ALLOWED_HOSTS', () => {
  const ctx = useTestApp();

  it.each(['inventory.example:8443', 'inventory_service:8080', '10.0.0.7', '[::1]:8080', 'LOCALHOST.'])(
    'builds hrefs from the well-formed host %s',
    async (host) => {
      expect(await indexHref(ctx.app, host)).toEqual({ status: 200, href: `http://${host}/v1/products` });
    },
  );

  it.each(['evil.example/phish?x=', 'a@evil.example', 'evil.example:80:80', '"><script>', 'exa mple', '.'])(
    'refuses the Host %s with 400 before anything else',
    async (host) => {
      const response = await request(ctx.app).get(INDEX).set('Host', host);
      expectServerDeclined(response, {
        status: 400,
        error: 'Bad Request',
        exception: 'InvalidHostHeaderException',
        message: 'The Host header names no host this service answers for',
        path: INDEX,
      });
    },
  );
});

describe('with ALLOWED_HOSTS', () => {
  const ctx = useTestApp({ ALLOWED_HOSTS: 'inventory.example, 127.0.0.1' });

  it('answers a listed host, with or without a port and in any case', async () => {
    expect(await indexHref(ctx.app, 'Inventory.Example:8080')).toEqual({
      status: 200,
      href: 'http://Inventory.Example:8080/v1/products',
    });
    expect((await indexHref(ctx.app, '127.0.0.1:9')).status).toBe(200);
  });

  it('refuses any other host with 400, but not the health probe', async () => {
    expect(await indexHref(ctx.app, 'evil.example')).toEqual({ status: 400, href: undefined });
    expect((await request(ctx.app).get('/actuator/health').set('Host', 'evil.example')).status).toBe(200);
  });
});

describe('with PUBLIC_BASE_URL', () => {
  const ctx = useTestApp({ PUBLIC_BASE_URL: 'https://shop.example/inventory/', TRUST_PROXY: 'true' });

  it('builds every href from it, whatever Host or X-Forwarded headers say', async () => {
    const response = await request(ctx.app)
      .get(INDEX)
      .set('Authorization', bearer())
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil2.example')
      .set('X-Forwarded-Prefix', '/elsewhere');

    expect(response.status).toBe(200);
    for (const link of Object.values((response.body as { _links: Record<string, { href: string }> })._links)) {
      expect(link.href.startsWith('https://shop.example/inventory/v1/')).toBe(true);
    }
  });
});
