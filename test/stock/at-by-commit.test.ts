import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { call, expectStatus, givenLocation, givenProduct, pc } from '../support/stock-api.js';

/** D40: `at=` counts a transaction's stock changes from its commit, all together. */
const ctx = useTestApp();

const UNITS = 400;

describe('GET /v1/stock?sku=&at= inside one transaction', () => {
  it('answers none or all of a multi-unit create for every instant its ledger rows span, never a part', async () => {
    const sku = await givenProduct(ctx.app);
    const { locationId } = await givenLocation(ctx.app);
    const body = Array.from({ length: UNITS }, () => ({
      product: { sku },
      actualLocation: { locationId },
      quantity: pc(1),
    }));
    expectStatus(await call(ctx.app, 'post', '/v1/packaging-units').send(body), 201, 'create');
    const { rows } = await ctx.db.pool.query<{ first: Date; last: Date }>(
      `SELECT min(m.occurred_at) AS first, max(m.occurred_at) AS last
         FROM stock_movement m JOIN product p ON p.id = m.product_id WHERE p.sku = $1`,
      [sku],
    );
    const { first, last } = rows[0]!;
    const answers = new Set<number>();
    for (let step = 0; step <= 8; step++) {
      const instant = new Date(first.getTime() + ((last.getTime() - first.getTime()) * step) / 8).toISOString();
      const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}&at=${instant}`);
      expectStatus(response, 200, `stock at ${instant}`);
      answers.add(Number((response.body as { onHand: { magnitude: number } }).onHand.magnitude));
    }
    expect([...answers].filter((onHand) => onHand !== 0 && onHand !== UNITS)).toEqual([]);
  });
});
