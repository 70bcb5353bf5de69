import type pg from 'pg';
import request, { type Response, type Test } from 'supertest';
import { expect } from 'vitest';
import type { TestContext } from '../support/app.js';
import { aQuantity, type Json, type ProductJson, type QuantityJson } from '../support/builders.js';
import { UUID } from '../support/http.js';
import { bearer } from '../support/tokens.js';

/** A fixed Host makes every absolute href predictable (D7). */
export const HOST = 'inventory.example:8080';
export const BASE_URL = `http://${HOST}`;

export const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export { HAL_JSON_UTF8, JSON_UTF8, UUID } from '../support/http.js';

/** Spec part 2: the Product fields in the spec's order, as a response carries them (optional ones may be absent). */
export const PRODUCT_FIELDS = [
  'pKey',
  'sku',
  'label',
  'accountId',
  'baseUnit',
  'description',
  'availabilityState',
  'classification',
  'group',
  'stockZone',
  'overbookingAllowed',
  'units',
  'dimension',
  'stackingRules',
  'details',
  'ol',
  'createDt',
] as const;

export interface ProductApi {
  create(body: unknown): Test;
  /** Sends JSON text as is: numbers JSON.stringify cannot write, keys such as `__proto__`, non-object bodies. */
  createRaw(json: string): Test;
  /** GET /v1/products followed by the query string as given (already URL-encoded). */
  find(query?: string): Test;
  findBySku(sku: string): Test;
  /** The key goes into the path as given: encode it first where it needs encoding. */
  findByPKey(pKey: string): Test;
  update(body: unknown): Test;
  /** The key goes into the path as given, like findByPKey. */
  remove(pKey: string): Test;
}

export function productApi(ctx: TestContext): ProductApi {
  const as = (test: Test): Test => test.set('Authorization', bearer()).set('Host', HOST);
  return {
    create: (body) => as(request(ctx.app).post('/v1/products')).send(body as object),
    createRaw: (json) => as(request(ctx.app).post('/v1/products')).set('Content-Type', 'application/json').send(json),
    find: (query = '') => as(request(ctx.app).get(`/v1/products${query}`)),
    findBySku: (sku) => as(request(ctx.app).get(`/v1/products?sku=${encodeURIComponent(sku)}`)),
    findByPKey: (pKey) => as(request(ctx.app).get(`/v1/products/${pKey}`)),
    update: (body) => as(request(ctx.app).put('/v1/products')).send(body as object),
    remove: (pKey) => as(request(ctx.app).delete(`/v1/products/${pKey}`)),
  };
}

/** D8: a 201 for exactly one Product, no body, `Location` the absolute URL of the new Product; returns its pKey. */
export function expectCreatedOne(response: Response): string {
  expect(response.status).toBe(201);
  expect(response.text).toBe('');
  expect(response.headers['content-type']).toBeUndefined();
  const location = String(response.headers.location);
  const pKey = location.slice(`${BASE_URL}/v1/products/`.length);
  expect(location).toBe(`${BASE_URL}/v1/products/${pKey}`);
  expect(pKey).toMatch(UUID);
  return pKey;
}

export async function createProduct(api: ProductApi, product: Json): Promise<string> {
  return expectCreatedOne(await api.create(product));
}

/** A response that is a 404 and nothing else: no body, no content type (D11, invalid UOM). */
export function expectEmptyNotFound(response: Response): void {
  expect({ status: response.status, text: response.text, type: response.headers['content-type'] }).toEqual({
    status: 404,
    text: '',
    type: undefined,
  });
}

export interface RowCounts {
  products: number;
  units: number;
  stackingRules: number;
}

/** What every product table holds; equal before and after a refused request means nothing was written. */
export async function rowCounts(pool: pg.Pool): Promise<RowCounts> {
  const result = await pool.query<RowCounts>(
    `SELECT (SELECT count(*) FROM product)::int AS products, (SELECT count(*) FROM product_unit)::int AS units,
            (SELECT count(*) FROM stacking_rule)::int AS "stackingRules"`,
  );
  return result.rows[0] as RowCounts;
}

export async function skuCount(pool: pg.Pool, skus: readonly string[]): Promise<number> {
  const result = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku = ANY($1)', [skus]);
  return result.rows[0]?.n ?? 0;
}

const withClass = (quantity: QuantityJson): QuantityJson => aQuantity(quantity.magnitude, quantity.unitType[1]);

export interface ServerFields {
  pKey: string;
  /** The timestamp, or a matcher for it. */
  createDt: unknown;
  ol?: number;
  /** The pKeys the service gave the units, in order. */
  unitPKeys?: readonly string[];
}

/**
 * The representation a Product sent with these fields must come back as (spec part 2, D2-D4): the fields in the
 * spec's order, absent optional fields left out, `@class` filled in, the defaults of the spec and decisions.
 */
export function expectedProduct(sent: ProductJson, server: ServerFields): Json {
  const units = ((sent.units as Json[] | undefined) ?? []).map((unit, index) => {
    const view: Json = { pKey: server.unitPKeys?.[index] ?? expect.stringMatching(UUID) };
    for (const key of ['label', 'code', 'description'] as const) if (unit[key] !== undefined) view[key] = unit[key];
    view.quantity = withClass(unit.quantity as QuantityJson);
    for (const key of ['dimension', 'details'] as const) if (unit[key] !== undefined) view[key] = unit[key];
    return view;
  });
  const values: Json = {
    ...sent,
    pKey: server.pKey,
    baseUnit: withClass(sent.baseUnit),
    availabilityState: sent.availabilityState ?? 'AVAILABLE',
    overbookingAllowed: sent.overbookingAllowed ?? false,
    units,
    stackingRules: sent.stackingRules ?? [],
    ol: server.ol ?? 0,
    createDt: server.createDt,
  };
  const view: Json = {};
  for (const field of PRODUCT_FIELDS) {
    if (values[field] !== undefined && values[field] !== null) view[field] = values[field];
  }
  return view;
}

export function withoutLinks(resource: Json): Json {
  return Object.fromEntries(Object.entries(resource).filter(([key]) => key !== '_links'));
}
