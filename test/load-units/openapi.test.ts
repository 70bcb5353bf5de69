import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

describe('GET /v3/api-docs for the LoadUnit operations (D25)', () => {
  it('documents every LoadUnit operation with its request bodies, responses and their bodies', async () => {
    const response = await request(ctx.app).get('/v3/api-docs');

    expect(response.status).toBe(200);
    const paths = (response.body as { paths: Record<string, Record<string, Operation>> }).paths;
    const divide = paths['/v1/transport-unit']?.post;
    expect(divide?.operationId).toBe('lu-divide');
    expect(Object.keys(divide?.requestBody?.content ?? {})).toEqual([
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    expect(Object.keys(divide?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '409']));
    expect(divide?.responses['201']?.content).toBeUndefined();

    const findByPKey = paths['/v1/load-units/{pKey}']?.get;
    expect(findByPKey?.operationId).toBe('lu-findbypkey');
    expect(findByPKey?.responses['200']?.content?.['application/hal+json']?.schema).toEqual({
      $ref: '#/components/schemas/LoadUnitResource',
    });
    expect(paths['/v1/load-units/{pKey}']?.put?.operationId).toBe('lu-putproductinto');
    expect(Object.keys(paths['/v1/load-units/{pKey}']?.patch?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '404']),
    );

    const ofTransportUnit = paths['/v1/transport-units/{transportUnitBK}/load-units']?.get;
    expect(Object.keys(ofTransportUnit?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404']));
    expect(Object.keys(ofTransportUnit?.responses['200']?.content ?? {})).toEqual([
      'application/json',
      'application/hal+json',
    ]);
  });
});
