import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

describe('GET /actuator/health', () => {
  it('answers UP without a token when the database is reachable', async () => {
    const response = await request(ctx.app).get('/actuator/health');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ status: 'UP' });
  });
});
