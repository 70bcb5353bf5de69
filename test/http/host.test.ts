import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import request, { type Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct } from '../support/builders.js';
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

const refusedHost = (response: Response, path: string): void =>
  expectServerDeclined(response, {
    status: 400,
    error: 'Bad Request',
    exception: 'InvalidHostHeaderException',
    message: 'The Host header names no host this service answers for',
    path,
  });

/** A non-loopback IPv4 address of this machine, where a server listening on every address can be reached. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
}

describe('without PUBLIC_BASE_URL or ALLOWED_HOSTS (the default)', () => {
  const ctx = useTestApp({ ALLOWED_HOSTS: undefined });

  it.each([
    'localhost',
    'localhost:8080',
    'LOCALHOST.',
    'api.localhost:3000',
    '127.0.0.1:8080',
    '127.1.2.3',
    '[::1]:8080',
  ])('builds hrefs from the loopback host %s', async (host) => {
    expect(await indexHref(ctx.app, host)).toEqual({ status: 200, href: `http://${host}/v1/products` });
  });

  it('builds hrefs from the host supertest sends: the address it connected to', async () => {
    const response = await request(ctx.app).get(INDEX).set('Authorization', bearer());
    expect(response.status).toBe(200);
    expect(response.body._links['products-findall'].href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/products$/);
  });

  it.each(['evil.example', 'inventory.example:8443', 'inventory_service:8080', '10.0.0.7', 'localhost.evil.example'])(
    'refuses the well-formed but unlisted host %s with 400',
    async (host) => {
      refusedHost(await request(ctx.app).get(INDEX).set('Authorization', bearer()).set('Host', host), INDEX);
    },
  );

  it('refuses a create naming an unlisted host: no Location names it, and nothing is created', async () => {
    const product = aProduct();
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Host', 'evil.example')
      .send(product);
    expect(response.headers.location).toBeUndefined();
    refusedHost(response, '/v1/products');
    const { rowCount } = await ctx.db.pool.query('SELECT 1 FROM product WHERE sku = $1', [product.sku]);
    expect(rowCount).toBe(0);
  });

  it('answers the probes and the metrics whatever the host: kubelets and scrapers call a pod by its address', async () => {
    for (const path of ['/actuator/health', '/actuator/health/liveness', '/actuator/health/readiness']) {
      expect((await request(ctx.app).get(path).set('Host', '10.1.2.3:8080')).status).toBe(200);
    }
    const metrics = await request(ctx.app)
      .get('/actuator/prometheus')
      .set('Authorization', bearer())
      .set('Host', '10.1.2.3:8080');
    expect(metrics.status).toBe(200);
  });

  it.each(['evil.example/phish?x=', 'a@evil.example', 'evil.example:80:80', '"><script>', 'exa mple', '.'])(
    'refuses the Host %s with 400 before anything else',
    async (host) => {
      refusedHost(await request(ctx.app).get(INDEX).set('Host', host), INDEX);
    },
  );

  it('answers the address the request arrived at, as a client on another machine names it', async (test) => {
    const address = externalAddress();
    if (!address) return test.skip('this machine has no non-loopback IPv4 address');
    const server = http.createServer(ctx.app).listen(0, '0.0.0.0');
    await once(server, 'listening');
    try {
      const base = `http://${address}:${(server.address() as AddressInfo).port}`;
      const answer = await fetch(`${base}${INDEX}`, { headers: { Authorization: bearer() } });
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as { _links: Record<string, { href: string }> };
      expect(body._links['products-findall']!.href).toBe(`${base}/v1/products`);
    } finally {
      server.close();
    }
  });
});

describe('with HOST set', () => {
  const ctx = useTestApp({ ALLOWED_HOSTS: undefined, HOST: 'inventory.internal' });

  it('answers the host name it listens on, and no other', async () => {
    expect(await indexHref(ctx.app, 'inventory.internal:8080')).toEqual({
      status: 200,
      href: 'http://inventory.internal:8080/v1/products',
    });
    expect((await indexHref(ctx.app, 'evil.example')).status).toBe(400);
  });
});

describe('with PUBLIC_BASE_URL alone', () => {
  const ctx = useTestApp({ ALLOWED_HOSTS: undefined, PUBLIC_BASE_URL: 'https://shop.example/inventory' });

  it('answers any well-formed host: links do not come from it', async () => {
    expect(await indexHref(ctx.app, 'inventory_service:8080')).toEqual({
      status: 200,
      href: 'https://shop.example/inventory/v1/products',
    });
    expect((await indexHref(ctx.app, 'a@evil.example')).status).toBe(400);
  });
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
  const ctx = useTestApp({
    ALLOWED_HOSTS: undefined,
    PUBLIC_BASE_URL: 'https://shop.example/inventory/',
    TRUST_PROXY: 'true',
  });

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
