import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { bearer } from '../support/tokens.js';
import { JSON_UTF8 } from '../support/http.js';

/** Issue 15: HEAD /v1/products ran the whole list query only to throw the rows away. */
const ctx = useTestApp();

describe('HEAD /v1/products', () => {
  it('answers the headers of the list without reading the database', async () => {
    let connectionsTaken = 0;
    const count = (): void => {
      connectionsTaken++;
    };
    ctx.db.pool.on('acquire', count);
    try {
      const response = await request(ctx.app).head('/v1/products').set('Authorization', bearer());

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(JSON_UTF8);
      expect(response.text ?? '').toBe('');
      expect(connectionsTaken).toBe(0);
    } finally {
      ctx.db.pool.off('acquire', count);
    }
  });

  it('still looks the Product up when a sku is given', async () => {
    const response = await request(ctx.app).head('/v1/products?sku=NO-SUCH-SKU').set('Authorization', bearer());

    expect(response.status).toBe(404);
  });
});
