import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { bearer, signToken } from '../support/tokens.js';

const ctx = useTestApp({ AUTH_REQUIRED_SCOPES_READ: 'inventory.read', AUTH_REQUIRED_SCOPES_WRITE: 'inventory.write' });

const product = {
  sku: 'SCOPED-1',
  baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 },
};

describe('required scopes (issue 7, AUTH_REQUIRED_SCOPES_READ / _WRITE)', () => {
  it('lets a read-only token read', async () => {
    const response = await request(ctx.app)
      .get('/v1/products')
      .set('Authorization', bearer(signToken({ scope: 'inventory.read' })));

    expect(response.status).toBe(200);
  });

  it('answers a write with a read-only token with 403 in the API-declined format and stores nothing', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer(signToken({ scope: 'inventory.read' })))
      .send([product]);

    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toBe('application/hal+json; charset=utf-8');
    expect(response.body).toEqual({
      message: 'The bearer token lacks the scope inventory.write',
      messageKey: 'owms.common.auth.insufficientScope',
      obj: ['inventory.write'],
      httpStatus: '403',
      class: 'String',
    });
    expect((await ctx.db.pool.query('SELECT 1 FROM product')).rowCount).toBe(0);
  });

  it('accepts the scopes as an scp array as well', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer(signToken({ scp: ['inventory.read', 'inventory.write'] })))
      .send([product]);

    expect(response.status).toBe(201);
  });

  it('answers a read without the read scope with 403', async () => {
    const response = await request(ctx.app)
      .get('/v1/products/index')
      .set('Authorization', bearer(signToken({ scope: 'inventory.write' })));

    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ messageKey: 'owms.common.auth.insufficientScope', obj: ['inventory.read'] });
  });

  it('keeps public resources open without any token', async () => {
    expect((await request(ctx.app).get('/index')).status).toBe(200);
    expect((await request(ctx.app).get('/actuator/health')).status).toBe(200);
  });
});
