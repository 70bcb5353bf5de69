import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { aProduct, uniqueSku, type Json } from '../support/builders.js';
import { HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import { stockApi, STOCK_BASE } from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
let skus: string[];

beforeAll(async () => {
  skus = [uniqueSku('PG'), uniqueSku('PG'), uniqueSku('PG')];
  for (const sku of skus) expect((await api.post('/v1/products', aProduct({ sku }))).status).toBe(201);
});

function nextOf(link: string | undefined): string {
  const match = /^<(.+)>; rel="next"$/.exec(link ?? '');
  if (!match) throw new Error(`no next link in ${link}`);
  return match[1]!;
}

describe('GET /v1/products?limit=&after= (D33)', () => {
  it('answers a page of Products in creation order with a Link to the next, and the last page without one', async () => {
    const first = await api.get('/v1/products?limit=2');

    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe(JSON_UTF8);
    expect((first.body as Json[]).map((product) => product.sku)).toEqual(skus.slice(0, 2));
    const next = nextOf(first.headers.link);
    expect(next).toMatch(new RegExp(`^${STOCK_BASE}/v1/products\\?limit=2&after=\\d+$`));

    const last = await api.get(next.slice(STOCK_BASE.length));
    expect(last.status).toBe(200);
    expect((last.body as Json[]).map((product) => product.sku)).toEqual(skus.slice(2));
    expect(last.headers.link).toBeUndefined();
  });

  it('answers HAL with each Product as a resource under _embedded and _links.next when HAL is named', async () => {
    const page = await api.get('/v1/products?limit=1', 'application/hal+json');

    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe(HAL_JSON_UTF8);
    const body = page.body as { _embedded: { products: Json[] }; _links: Record<string, { href: string }> };
    expect(body._embedded.products).toHaveLength(1);
    expect(body._embedded.products[0]).toMatchObject({ sku: skus[0], _links: { self: { href: expect.any(String) } } });
    expect(body._links).toEqual({
      self: { href: `${STOCK_BASE}/v1/products?limit=1` },
      next: { href: nextOf(page.headers.link) },
    });
  });

  it('refuses limit or after together with sku', async () => {
    expectValidationError(await api.get(`/v1/products?sku=${skus[0]}&limit=2`), [
      ['limit', 'pages the list of all Products: not with sku'],
    ]);
  });

  it('refuses a limit beyond 1000', async () => {
    const response = await api.get('/v1/products?limit=1001');
    expect(response.status).toBe(400);
    expect((response.body as Json).obj).toEqual(['limit']);
  });
});
