import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
}

describe('GET /v3/api-docs for the LoadUnit operations (D25)', () => {
  it('documents every LoadUnit operation with its request bodies and error responses', async () => {
    const response = await request(ctx.app).get('/v3/api-docs');

    expect(response.status).toBe(200);
    const paths = (response.body as { paths: Record<string, Record<string, Operation>> }).paths;
    const divide = paths['/v1/transport-unit']?.post;
    expect(divide?.operationId).toBe('lu-divide');
    expect(Object.keys(divide?.requestBody?.content ?? {})).toEqual([
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    expect(Object.keys(divide?.responses ?? {})).toEqual(['201', '400', '409']);
    expect(paths['/v1/load-units/{pKey}']?.get?.operationId).toBe('lu-findbypkey');
    expect(paths['/v1/load-units/{pKey}']?.put?.operationId).toBe('lu-putproductinto');
    expect(Object.keys(paths['/v1/load-units/{pKey}']?.patch?.responses ?? {})).toEqual(['200', '400', '404']);
    expect(Object.keys(paths['/v1/transport-units/{transportUnitBK}/load-units']?.get?.responses ?? {})).toEqual([
      '200',
      '404',
    ]);
  });
});
