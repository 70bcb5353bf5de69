import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  call,
  expectStatus,
  givenGroups,
  givenLocation,
  givenProduct,
  givenUnitsOnLocation,
  pc,
  unique,
} from '../support/stock-api.js';

const ctx = useTestApp();
const UNITS = 5000;

interface Listed {
  pKey: string;
}

/** The `rel="next"` target of a Link header, as a path the in-process app answers. */
function nextOf(link: string | undefined): string | undefined {
  const target = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')?.[1];
  return target === undefined ? undefined : new URL(target).pathname + new URL(target).search;
}

/** Follows `Link: rel="next"` from `first` to the end, answering every unit's key and each page's size. */
async function walk(first: string): Promise<{ keys: string[]; sizes: number[] }> {
  const keys: string[] = [];
  const sizes: number[] = [];
  for (let path: string | undefined = first; path !== undefined;) {
    const response = await call(ctx, 'get', path);
    expectStatus(response, 200, `GET ${path}`);
    const page = response.body as Listed[];
    keys.push(...page.map((unit) => unit.pKey));
    sizes.push(page.length);
    path = nextOf(response.headers.link);
  }
  return { keys, sizes };
}

describe('GET /v1/packaging-units pages instead of stopping silently (D39)', () => {
  let sku: string;
  let locationId: string;
  let group: string;
  let productPKey: string;
  let created: string[];

  beforeAll(async () => {
    sku = await givenProduct(ctx);
    productPKey = ((await call(ctx, 'get', `/v1/products?sku=${sku}`)).body as { pKey: string }).pKey;
    group = unique('GROUP');
    await givenGroups(ctx, { name: group });
    ({ locationId } = await givenLocation(ctx, { locationGroupName: group }));
    const units = Array.from({ length: UNITS }, (_, index) => ({ quantity: pc(1 + (index % 7)) }));
    created = (await givenUnitsOnLocation(ctx, locationId, sku, units)).map((unit) => unit.pKey);
  }, 60_000);

  it('answers 1,000 of 5,000 units of a SKU with a Link to the next page, and the pages hold each unit once', async () => {
    const first = await call(ctx, 'get', `/v1/packaging-units?sku=${sku}`);
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(1000);
    expect(first.headers.link).toMatch(/^<http:\/\/inventory\.test\/v1\/packaging-units\?.+>; rel="next"$/);

    const { keys, sizes } = await walk(`/v1/packaging-units?sku=${sku}`);
    expect(sizes).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(keys).toEqual(created);
  });

  it.each([
    ['quantity', 'DESC'],
    ['expiresAt', 'ASC'],
    ['pKey', 'ASC'],
  ])('pages in the order asked for (%s %s) without losing or repeating a unit', async (property, direction) => {
    const { keys, sizes } = await walk(
      `/v1/packaging-units?sku=${sku}&sortProperty=${property}&sortDirection=${direction}&amount=1500`,
    );
    expect(sizes).toEqual([1500, 1500, 1500, 500]);
    expect(new Set(keys).size).toBe(UNITS);
    expect([...keys].sort()).toEqual([...created].sort());
  });

  it('pages the units on a Location and in a LocationGroup the same way', async () => {
    const onLocation = await walk(`/v1/packaging-units?locationId=${locationId}&amount=2000`);
    expect(onLocation.sizes).toEqual([2000, 2000, 1000]);
    expect(onLocation.keys).toEqual(created);
    const inGroup = await walk(`/v1/packaging-units?productPKey=${productPKey}&locationGroupName=${group}&amount=3000`);
    expect(inGroup.sizes).toEqual([3000, 2000]);
    expect(inGroup.keys).toEqual(created);
  });

  it('answers a HAL page with _links.next to the same address as the Link header', async () => {
    const response = await call(ctx, 'get', `/v1/packaging-units?sku=${sku}&amount=10`).set(
      'Accept',
      'application/hal+json',
    );
    expect(response.status).toBe(200);
    const body = response.body as { _embedded: { 'packaging-units': unknown[] }; _links: { next?: { href: string } } };
    expect(body._embedded['packaging-units']).toHaveLength(10);
    expect(response.headers.link).toBe(`<${body._links.next?.href}>; rel="next"`);
  });

  it('sends no next link on the last page', async () => {
    const response = await call(ctx, 'get', `/v1/packaging-units?sku=${sku}&amount=10000`);
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(UNITS);
    expect(response.headers.link).toBeUndefined();
  });

  it('answers 400 naming after for a cursor in the right shape whose time does not exist', async () => {
    const forged = Buffer.from(JSON.stringify(['createDt', 'ASC', '2026-01-01 25:61:00+00', 1])).toString('base64url');
    const response = await call(ctx, 'get', `/v1/packaging-units?sku=${sku}&after=${forged}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['after'] });
  });

  it.each([
    ['a cursor that is not one', 'after=nonsense'],
    ['a cursor of another sort order', 'sortProperty=quantity'],
  ])('answers 400 naming after for %s', async (_case, query) => {
    const first = await call(ctx, 'get', `/v1/packaging-units?sku=${sku}&amount=1`);
    const next = nextOf(first.headers.link) ?? '';
    const after = new URLSearchParams(next.split('?')[1]).get('after') ?? '';
    const path =
      query === 'after=nonsense'
        ? `/v1/packaging-units?sku=${sku}&${query}`
        : `/v1/packaging-units?sku=${sku}&${query}&after=${after}`;
    const response = await call(ctx, 'get', path);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('after');
  });
});
