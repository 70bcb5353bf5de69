import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}

interface ApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

describe('GET /v3/api-docs (D25)', () => {
  it('describes every product operation with its path, method and operation id', async () => {
    const response = await request(ctx.app).get('/v3/api-docs');

    expect(response.status).toBe(200);
    const document = response.body as ApiDocument;
    expect(document.openapi).toMatch(/^3\.1\./);
    const products = document.paths['/v1/products'] ?? {};
    const byKey = document.paths['/v1/products/{pKey}'] ?? {};
    expect(Object.keys(products).sort()).toEqual(['get', 'options', 'post', 'put']);
    expect(Object.keys(byKey).sort()).toEqual(['delete', 'get', 'options']);
    expect({
      create: products.post?.operationId,
      findAll: products.get?.operationId,
      update: products.put?.operationId,
      findByPKey: byKey.get?.operationId,
      remove: byKey.delete?.operationId,
    }).toEqual({
      create: 'products-create',
      findAll: 'products-findall',
      update: 'products-update',
      findByPKey: 'products-findbyspkey',
      remove: 'products-delete',
    });
    expect(Object.keys(products.post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '409']));
    expect(Object.keys(byKey.delete?.responses ?? {})).toEqual(expect.arrayContaining(['204', '403', '404']));
  });

  it('gives POST /v1/products a JSON request body: an array of Products requiring sku and baseUnit', async () => {
    const document = (await request(ctx.app).get('/v3/api-docs')).body as ApiDocument;

    const schema = document.paths['/v1/products']?.post?.requestBody?.content?.['application/json']?.schema;
    expect(schema).toMatchObject({ type: 'array', minItems: 1, items: { $ref: '#/components/schemas/ProductCreate' } });
    const product = document.components?.schemas?.ProductCreate;
    expect(product?.required).toEqual(expect.arrayContaining(['sku', 'baseUnit']));
    expect(Object.keys(product?.properties ?? {})).toEqual(
      expect.arrayContaining(['sku', 'baseUnit', 'units', 'stackingRules', 'details', 'availabilityState']),
    );
  });
});
