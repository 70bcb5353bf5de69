import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { BASE, get, givenDivided, givenTransportUnitWithOneLoadUnit, loadUnitsOf, unique } from './load-unit-api.js';

/** Issue 15: the LoadUnits of a TransportUnit come a page at a time (1.6 MB answers were seen). */
const ctx = useTestApp();

const positionsOf = (body: unknown): string[] =>
  (body as { physicalPosition: string }[]).map((loadUnit) => loadUnit.physicalPosition);

/** The target of a `Link: <…>; rel="next"` header, relative to the test app's base. */
function nextOf(link: string | undefined): string | undefined {
  const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
  return match?.[1]?.replace(BASE, '');
}

describe('GET /v1/transport-units/{bk}/load-units, paged', () => {
  it('answers limit LoadUnits in position order and links the next page until the last one', async () => {
    const bk = unique('TU');
    await givenTransportUnitWithOneLoadUnit(ctx.db.pool, bk, 'B');
    await givenDivided(ctx.app, bk, 10, 'BOX');
    const path = `/v1/transport-units/${encodeURIComponent(bk)}/load-units`;

    const seen: string[] = [];
    let next: string | undefined = `${path}?limit=4`;
    let pages = 0;
    while (next !== undefined) {
      const response = await get(ctx.app, next);
      expect(response.status).toBe(200);
      seen.push(...positionsOf(response.body));
      next = nextOf(response.headers.link);
      pages++;
    }

    expect(pages).toBe(3);
    expect(seen).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'B']);
  });

  it('links the next page with an absolute href in the header and in HAL', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 3, 'BOX');
    const stored = await loadUnitsOf(ctx.db.pool, bk);
    const path = `/v1/transport-units/${encodeURIComponent(bk)}/load-units`;
    const second = stored.find((loadUnit) => loadUnit.physicalPosition === '2')!;
    const { rows } = await ctx.db.pool.query<{ id: string }>('SELECT id::text FROM load_unit WHERE p_key = $1', [
      second.pKey,
    ]);
    const nextHref = `${BASE}${path}?limit=2&after=${rows[0]!.id}`;

    const plain = await get(ctx.app, `${path}?limit=2`);
    const hal = await get(ctx.app, `${path}?limit=2`).set('Accept', 'application/hal+json');
    const last = await get(ctx.app, nextHref.replace(BASE, ''));

    expect(plain.headers.link).toBe(`<${nextHref}>; rel="next"`);
    expect((hal.body as { _links: unknown })._links).toEqual({
      self: { href: `${BASE}${path}` },
      next: { href: nextHref },
    });
    expect(positionsOf(last.body)).toEqual(['3']);
    expect(last.headers.link).toBeUndefined();
  });

  it('answers every LoadUnit of a small TransportUnit on one page without a Link header', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 3, 'BOX');

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units`);

    expect(positionsOf(response.body)).toEqual(['1', '2', '3']);
    expect(response.headers.link).toBeUndefined();
  });

  it.each([
    ['limit=0', 'limit', 'Too small: expected number to be >=1'],
    ['limit=1001', 'limit', 'Too big: expected number to be <=1000'],
    ['after=abc', 'after', 'must be the cursor of a next link'],
  ])('answers 400 for %s', async (query, path, message) => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2, 'BOX');

    const response = await get(ctx.app, `/v1/transport-units/${encodeURIComponent(bk)}/load-units?${query}`);

    expectValidationError(response, [[path, message]]);
  });
});
