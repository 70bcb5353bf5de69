import { expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { uniqueSku } from '../support/builders.js';
import { call, expectStatus, pc } from '../support/stock-api.js';

/**
 * D39: an ANALYZE taken while a bulk load's transaction is open (autovacuum's, prompted by the load) counts its rows
 * as not there: the statistics then say the default part's pages hold nothing, and the first numbering run after
 * the next bulk load walked the whole backlog once per event of the run (118 s after a 1,000,000-unit intake). A
 * bulk load leaves the statistics true itself.
 */
const ctx = useTestApp();
const PRODUCTS = 20_000;

async function unnumberedStatistics(): Promise<{ tuples: number; pages: number }> {
  const { rows } = await ctx.db.pool.query<{ tuples: number; pages: number }>(
    `SELECT reltuples::float8 AS tuples, relpages AS pages FROM pg_class WHERE relname = 'event_outbox_unnumbered'`,
  );
  return rows[0]!;
}

it(`numbers a ${PRODUCTS.toLocaleString('en-US')}-Product load within 60 s after statistics taken during an earlier load said the outbox was empty`, async () => {
  await ctx.db.pool.query('ALTER TABLE event_outbox_unnumbered SET (autovacuum_enabled = off)');
  try {
    const earlier = await ctx.db.pool.connect();
    try {
      await earlier.query('BEGIN');
      await earlier.query(
        `INSERT INTO event_outbox (type, resource_key, resource)
         SELECT 'pu.event.created', 'EARLIER-' || n, json_build_object('n', n) FROM generate_series(1, 50000) n`,
      );
      await ctx.db.pool.query('ANALYZE event_outbox_unnumbered');
      await earlier.query('ROLLBACK');
    } finally {
      earlier.release();
    }
    const stale = await unnumberedStatistics();
    expect(stale.tuples).toBeLessThan(100);
    expect(stale.pages).toBeGreaterThan(100);
    const { rows: head } = await ctx.db.pool.query<{ head: number }>(
      'SELECT sequenced_through::int AS head FROM event_feed_state WHERE id = 1',
    );

    const products = Array.from({ length: PRODUCTS }, () => ({ sku: uniqueSku('BULK'), baseUnit: pc(1) }));
    expectStatus(await call(ctx, 'post', '/v1/products').send(products), 201, 'the bulk load');
    expect((await unnumberedStatistics()).tuples).toBeGreaterThanOrEqual(PRODUCTS * 0.9);

    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await ctx.db.pool.query<{ head: number }>(
        'SELECT sequenced_through::int AS head FROM event_feed_state WHERE id = 1',
      );
      if (rows[0]!.head === head[0]!.head + PRODUCTS) break;
      if (Date.now() > deadline)
        throw new Error(`${rows[0]!.head - head[0]!.head} of ${PRODUCTS} events numbered in 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await ctx.db.pool.query('ALTER TABLE event_outbox_unnumbered RESET (autovacuum_enabled)');
  }
}, 120_000);
