import type { Express } from 'express';
import type pg from 'pg';
import request, { type Test } from 'supertest';
import { givenProduct as givenSeededProduct, type SeededProduct } from '../support/stock.js';
import { bearer } from '../support/tokens.js';

export { givenDivided } from '../support/stock-api.js';

/** A fixed Host makes every absolute href predictable (D7). */
export const HOST = 'inventory.test:8080';
export const BASE = `http://${HOST}`;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const HAL_JSON_UTF8 = 'application/hal+json; charset=utf-8';
export const JSON_UTF8 = 'application/json; charset=utf-8';
export const UNITS_PKG = 'org.openwms.core.units.api';

export const PIECE = { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'PC'], magnitude: 1 };
export const GRAM = { '@class': `${UNITS_PKG}.Weight`, unitType: [`${UNITS_PKG}.WeightUnit`, 'G'], magnitude: 1 };

let counter = 0;
/** A key no other test of the file uses, so tests sharing the file's database stay independent. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

function authorised(test: Test): Test {
  return test.set('Authorization', bearer()).set('Host', HOST);
}

/** lu-divide as the spec sends it: form-urlencoded. */
export function divide(app: Express, fields: Record<string, string>): Test {
  return authorised(request(app).post('/v1/transport-unit')).type('form').send(fields);
}

export function divideJson(app: Express, body: unknown): Test {
  return authorised(request(app).post('/v1/transport-unit')).send(body as object);
}

export function get(app: Express, path: string): Test {
  return authorised(request(app).get(path));
}

export function put(app: Express, path: string, body: unknown): Test {
  return authorised(request(app).put(path)).send(body as object);
}

export function patch(app: Express, path: string, body: unknown): Test {
  return authorised(request(app).patch(path)).send(body as object);
}

/** Creates a Product (base unit 1 PC unless told) or fails the test; answers its id and pKey. */
export function givenProduct(
  app: Express,
  pool: pg.Pool,
  sku: string,
  baseUnit: object = PIECE,
): Promise<SeededProduct> {
  return givenSeededProduct({ app, db: { pool } }, { sku, baseUnit });
}

export interface StoredLoadUnit {
  pKey: string;
  physicalPosition: string;
  type: string;
  locked: boolean;
  productId: number | null;
  ol: number;
}

/** The LoadUnits stored for a TransportUnit, by id. */
export async function loadUnitsOf(pool: pg.Pool, transportUnitBK: string): Promise<StoredLoadUnit[]> {
  const { rows } = await pool.query<StoredLoadUnit & { productId: string | null }>(
    `SELECT lu.p_key AS "pKey", lu.physical_position AS "physicalPosition", lu.load_unit_type AS type, lu.locked,
            lu.product_id AS "productId", lu.ol
       FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
      WHERE tu.bk = $1 ORDER BY lu.id`,
    [transportUnitBK],
  );
  return rows.map((row) => ({ ...row, productId: row.productId === null ? null : Number(row.productId) }));
}

export async function transportUnitCount(pool: pg.Pool, transportUnitBK: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM transport_unit WHERE bk = $1', [
    transportUnitBK,
  ]);
  return Number(rows[0]?.n);
}

/** Puts a PackagingUnit of the Product into the LoadUnit directly, as the packaging-unit feature would. */
export async function givenPackagingUnitIn(
  pool: pg.Pool,
  loadUnitPKey: string,
  productId: number,
  magnitude = 5,
): Promise<void> {
  await pool.query(
    `INSERT INTO packaging_unit (product_id, qty_magnitude, qty_code, load_unit_id)
     SELECT $1::bigint, $3::numeric, 'PC', id FROM load_unit WHERE p_key = $2::uuid`,
    [productId, loadUnitPKey, magnitude],
  );
}

/** A TransportUnit with exactly one LoadUnit, made through SQL: at `position`, of `type`. */
export async function givenTransportUnitWithOneLoadUnit(
  pool: pg.Pool,
  transportUnitBK: string,
  position: string,
  type = 'PALLET',
): Promise<string> {
  const { rows } = await pool.query<{ p_key: string }>(
    `WITH tu AS (INSERT INTO transport_unit (bk) VALUES ($1) RETURNING id)
     INSERT INTO load_unit (transport_unit_id, physical_position, load_unit_type)
     SELECT id, $2, $3 FROM tu RETURNING p_key`,
    [transportUnitBK, position, type],
  );
  return rows[0]!.p_key;
}
