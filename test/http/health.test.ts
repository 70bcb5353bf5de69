import type pg from 'pg';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { waitFor } from '../support/pg-activity.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();

describe('GET /actuator/health', () => {
  it('answers UP without a token when the database is reachable', async () => {
    const response = await request(ctx.app).get('/actuator/health');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ status: 'UP' });
  });

  it('answers UP at once while every pool connection is taken and requests queue for one (issue 15)', async () => {
    const pool = ctx.db.pool;
    const taken: pg.PoolClient[] = [];
    try {
      while (pool.totalCount < pool.options.max || pool.idleCount > 0) taken.push(await pool.connect());
      const lookup = request(ctx.app)
        .get('/v1/products?sku=NO-SUCH-SKU')
        .set('Authorization', bearer())
        .then((response) => response.status);
      await waitFor('the lookup to queue for a connection', async () => (pool.waitingCount > 0 ? true : undefined));

      const started = performance.now();
      const health = await request(ctx.app).get('/actuator/health');
      const healthMs = performance.now() - started;

      expect(health.status).toBe(200);
      expect(health.body).toStrictEqual({ status: 'UP' });
      expect(healthMs).toBeLessThan(2000); // less than its probe's timeout: it did not wait behind the queue
      expect(pool.waitingCount).toBe(1);
      for (const client of taken.splice(0)) client.release();
      expect(await lookup).toBe(404);
    } finally {
      for (const client of taken) client.release();
    }
  });
});
