/**
 * Builders that seed stock through the HTTP API (products, location groups, Locations, TransportUnits,
 * PackagingUnits, reservations) and small SQL probes for asserting side effects. Shared by the packaging-unit
 * and move suites; each helper fails the test when the API refuses the seed.
 */
import type { Express } from 'express';
import type pg from 'pg';
import { expect } from 'vitest';
import request, { type Test } from 'supertest';
import type { TestContext } from './app.js';
import { aQuantity, uniqueSku, type Json, type QuantityJson } from './builders.js';
import { expectStatus, givenProduct as givenSku } from './stock-api.js';
import { bearer } from './tokens.js';

export { givenDivided, givenGroups, givenLoadUnitLocked, givenLocation, givenTransportUnitOn } from './stock-api.js';

/** A fixed Host makes every absolute href predictable (D7). */
export const STOCK_HOST = 'stock.test:8080';
export const STOCK_BASE = `http://${STOCK_HOST}`;
export const VENDOR_OPENWMS = 'application/vnd.openwms.packaging-unit-v1+json';
export const VENDOR_OWMS = 'application/vnd.owms.packaging-unit-v1+json';

let counter = 0;
/** A key no other call in this process returns (business keys, location ids, group names). */
export function uniqueKey(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export interface StockApi {
  get(path: string, accept?: string): Test;
  post(path: string, body?: unknown): Test;
  put(path: string, body: unknown): Test;
  patch(path: string, body: unknown): Test;
  del(path: string, body?: unknown): Test;
}

/** Authorised requests against the file's app, with the fixed Host; `token` replaces the default bearer token. */
export function stockApi(ctx: TestContext, token?: string): StockApi {
  const as = (test: Test): Test => test.set('Authorization', bearer(token)).set('Host', STOCK_HOST);
  return {
    get: (path, accept) => {
      const test = as(request(ctx.app).get(path));
      return accept === undefined ? test : test.set('Accept', accept);
    },
    post: (path, body) => {
      const test = as(request(ctx.app).post(path));
      return body === undefined ? test : test.send(body as object);
    },
    put: (path, body) => as(request(ctx.app).put(path)).send(body as object),
    patch: (path, body) => as(request(ctx.app).patch(path)).send(body as object),
    del: (path, body) => {
      const test = as(request(ctx.app).delete(path));
      return body === undefined ? test : test.send(body as object);
    },
  };
}

export interface SeededProduct {
  readonly id: number;
  readonly pKey: string;
  readonly sku: string;
}

/** A Product (base unit 1 PC unless told), created through POST /v1/products; answers its id, pKey and SKU. */
export async function givenProduct(
  ctx: { app: Express; db: { pool: pg.Pool } },
  overrides: Json = {},
): Promise<SeededProduct> {
  const sku = await givenSku(ctx, { sku: uniqueSku('PU'), ...overrides });
  const { rows } = await ctx.db.pool.query<{ id: string; p_key: string }>(
    'SELECT id, p_key FROM product WHERE sku = $1',
    [sku],
  );
  return { id: Number(rows[0]!.id), pKey: rows[0]!.p_key, sku };
}

/** The JSON of one new PackagingUnit: `{product: {sku}, quantity}` plus the overrides. */
export function aUnit(sku: string, magnitude: number, code = 'PC', overrides: Json = {}): Json {
  return { product: { sku }, quantity: aQuantity(magnitude, code), ...overrides };
}

export type UnitJson = Json & { pKey: string; quantity: QuantityJson };

/** Creates units in the LoadUnit at bk/luPos (created as `loadUnitType` when missing); answers the created units. */
export async function givenUnitsInLoadUnit(
  ctx: TestContext,
  bk: string,
  luPos: string,
  units: Json[],
  loadUnitType = 'BOX',
): Promise<UnitJson[]> {
  const path = `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units?loadUnitType=${loadUnitType}`;
  const response = await stockApi(ctx).post(path, { packagingUnits: units });
  expectStatus(response, 201, `create units in ${bk}/${luPos}`);
  return response.body as UnitJson[];
}

/** Creates units lying directly on Locations (each unit names its `actualLocation`); answers the created units. */
export async function givenUnitsOnLocation(ctx: TestContext, units: Json[]): Promise<UnitJson[]> {
  const response = await stockApi(ctx).post('/v1/packaging-units', units);
  expectStatus(response, 201, 'create units on locations');
  return response.body as UnitJson[];
}

/** One unit of `magnitude` `code` of the Product on the Location. */
export async function givenUnitOnLocation(
  ctx: TestContext,
  sku: string,
  locationId: string,
  magnitude: number,
  code = 'PC',
): Promise<UnitJson> {
  const [unit] = await givenUnitsOnLocation(ctx, [aUnit(sku, magnitude, code, { actualLocation: { locationId } })]);
  return unit!;
}

/** Reserves through POST /allocation/transport-units; answers the allocation results. */
export async function givenReserved(ctx: TestContext, sku: string, magnitude: number, code = 'PC'): Promise<Json[]> {
  const response = await stockApi(ctx).post('/allocation/transport-units', { sku, qty: aQuantity(magnitude, code) });
  expectStatus(response, 200, `allocate ${magnitude} ${code} of ${sku}`);
  return response.body as Json[];
}

/** The pKey of the LoadUnit at bk/luPos, read from the database. */
export async function loadUnitPKey(pool: pg.Pool, bk: string, luPos: string): Promise<string> {
  const { rows } = await pool.query<{ p_key: string }>(
    `SELECT lu.p_key FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
      WHERE tu.bk = $1 AND lu.physical_position = $2`,
    [bk, luPos],
  );
  if (!rows[0]) throw new Error(`no LoadUnit ${bk}/${luPos}`);
  return rows[0].p_key;
}

export interface StoredUnit {
  readonly pKey: string;
  readonly sku: string;
  /** `"19 PC"`: the stored magnitude and unit. */
  readonly quantity: string;
  readonly qtyBase: string;
  readonly reservedBase: string;
  readonly state: string;
  readonly parentPKey: string | null;
  /** `bk/luPos` of the holding LoadUnit, or `@locationId` of the holding Location. */
  readonly holder: string;
  readonly messageNo: string | null;
  readonly messageText: string | null;
}

const STORED_UNITS = `
  SELECT pu.p_key AS "pKey", p.sku, pu.qty_magnitude::text || ' ' || pu.qty_code AS quantity,
         pu.qty_base::text AS "qtyBase", pu.reserved_base::text AS "reservedBase", pu.state,
         parent.p_key AS "parentPKey", COALESCE(tu.bk || '/' || lu.physical_position, '@' || loc.location_id) AS holder,
         pu.message_no AS "messageNo", pu.message_text AS "messageText"
    FROM packaging_unit pu
    JOIN product p ON p.id = pu.product_id
    LEFT JOIN packaging_unit parent ON parent.id = pu.parent_id
    LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
    LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
    LEFT JOIN location loc ON loc.id = pu.location_id`;

/** The stored unit with that pKey, or undefined when there is none. */
export async function storedUnit(pool: pg.Pool, pKey: string): Promise<StoredUnit | undefined> {
  const { rows } = await pool.query<StoredUnit>(`${STORED_UNITS} WHERE pu.p_key = $1::uuid`, [pKey]);
  return rows[0];
}

/** Every stored unit of the Product, oldest first. */
export async function storedUnitsOf(pool: pg.Pool, sku: string): Promise<StoredUnit[]> {
  const { rows } = await pool.query<StoredUnit>(`${STORED_UNITS} WHERE p.sku = $1 ORDER BY pu.id`, [sku]);
  return rows;
}

/** `sum(qty_base)` of the Product's units as text (`"0"` when there are none): what no move may change (D21). */
export async function productTotal(pool: pg.Pool, sku: string): Promise<string> {
  const { rows } = await pool.query<{ total: string }>(
    `SELECT COALESCE(sum(pu.qty_base), 0)::text AS total
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku = $1`,
    [sku],
  );
  return rows[0]!.total;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Spec part 2: the PackagingUnit fields in the spec's order, as a response carries them (absent ones left out). */
export const UNIT_FIELDS = [
  'pKey',
  'product',
  'quantity',
  'qtyAvailable',
  'state',
  'message',
  'loadUnit',
  'actualLocation',
  'dimension',
  'weight',
  'distribution',
  'physicalPosition',
  'serialNumber',
  'expiresAt',
  'labels',
  'details',
  'links',
  'ol',
  'createDt',
  '_links',
] as const;

/** The partial Product a PackagingUnit embeds. */
export function productPart(product: SeededProduct, baseUnit: QuantityJson = aQuantity(1)): Json {
  return { pKey: product.pKey, sku: product.sku, baseUnit };
}

/** The partial LoadUnit a PackagingUnit embeds. */
export function loadUnitPart(pKey: string, bk: string, position: string, type = 'BOX', locked = false): Json {
  return { pKey, transportUnitBK: bk, physicalPosition: position, type, locked };
}

/** The Location as GET /v1/locations answers it, without `_links`: what a PackagingUnit embeds. */
export async function locationPart(ctx: TestContext, locationId: string): Promise<Json> {
  const response = await stockApi(ctx).get(`/v1/locations?locationId=${encodeURIComponent(locationId)}`);
  expectStatus(response, 200, `GET location ${locationId}`);
  const location: Json = { ...(response.body as Json) };
  delete location._links;
  return location;
}

/** `links` of the vendor representation: loadUnit and transportUnit only for a unit in a LoadUnit. */
export function vendorLinks(product: SeededProduct, loadUnit?: { pKey: string; bk: string }): Json[] {
  const links: Json[] = [];
  if (loadUnit) {
    links.push({ rel: 'loadUnit', href: `${STOCK_BASE}/v1/load-units/${loadUnit.pKey}` });
    links.push({ rel: 'transportUnit', href: `${STOCK_BASE}/v1/transport-units?bk=${loadUnit.bk}` });
  }
  links.push({ rel: 'product', href: `${STOCK_BASE}/v1/products/${product.pKey}` });
  return links;
}

/**
 * An expected PackagingUnit in the spec's field order: `qtyAvailable` defaults to `quantity`, `state` to
 * AVAILABLE, `pKey` to any UUID, `ol` to 0 and `createDt` to any UTC timestamp. Compare with toEqual and compare
 * `Object.keys` for the order.
 */
export function unitView(fields: Json & { product: Json; quantity: QuantityJson }): Json {
  const defaults: Json = {
    pKey: expect.stringMatching(UUID),
    qtyAvailable: fields.quantity,
    state: 'AVAILABLE',
    ol: 0,
    createDt: expect.stringMatching(TIMESTAMP),
  };
  const all = { ...defaults, ...fields };
  const view: Json = {};
  for (const key of UNIT_FIELDS) if (all[key] !== undefined) view[key] = all[key];
  return view;
}
