import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { call, expectStatus, givenLocation, givenProduct, givenUnitsOnLocation, pc } from '../support/stock-api.js';

/**
 * D40: while the feed does not number a committed change, a reading cannot say which feed position its current
 * figures include. The list then answers as of the newest commit boundary; one Product's reading keeps its 503.
 */
const ctx = useTestApp();

describe('GET /v1/stock while the feed is behind', () => {
  it('lists the figures as of the newest boundary, without available, and refuses a single reading with 503', async () => {
    const sku = await givenProduct(ctx.app);
    const { locationId } = await givenLocation(ctx.app);
    await givenUnitsOnLocation(ctx.app, locationId, sku, [{ quantity: pc(3) }]);
    const numbered = await call(ctx.app, 'get', `/v1/stock?sku=${sku}`);
    expectStatus(numbered, 200, 'stock while numbering runs');
    // The numbering stops: the next change's events stay without a position. The file's teardown stops it again.
    const { events } = ctx;
    await events.stop();
    ctx.events = { ...events, stop: () => Promise.resolve() };
    await givenUnitsOnLocation(ctx.app, locationId, sku, [{ quantity: pc(4) }]);

    const single = await call(ctx.app, 'get', `/v1/stock?sku=${sku}`);
    const list = await call(ctx.app, 'get', '/v1/stock?limit=1000');

    expect([single.status, single.headers['retry-after']]).toEqual([503, '1']);
    expect(list.status).toBe(200);
    const item = (list.body as Record<string, unknown>[]).find((row) => row.sku === sku);
    expect(item).toEqual({
      sku,
      onHand: pc(3),
      reserved: pc(0),
      feedCursor: (numbered.body as { feedCursor: string }).feedCursor,
    });
  }, 30_000);
});
