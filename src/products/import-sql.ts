import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import type { Tx } from '../db/tx.js';
import type { ProductUnitValues, ProductValues, StackingRuleValues } from './sql.js';

/**
 * The staging table of one streamed import: a product, each of its units and each of its stacking rules is one row
 * (`kind` p, u, r), so that a single COPY carries them all; `line` is the body line that sent it. Temporary and
 * dropped at commit: the session's own, written without WAL.
 */
export async function createImportTable(tx: Tx): Promise<void> {
  await tx.query(
    `CREATE TEMPORARY TABLE product_import (
       kind "char" NOT NULL, line integer NOT NULL, position integer, sku text NOT NULL, label text, account_id text,
       code text, magnitude numeric, unit_code text, description text, availability_state text, classification text,
       product_group text, stock_zone text, overbooking_allowed boolean, dimension json, details json,
       no_products integer, allowed_sku text
     ) ON COMMIT DROP`,
  );
}

/** The COPY that fills the staging table; rows are written with the importRow* functions below. */
export function copyIntoImportTable(timeoutMs: number): CopyStreamQuery {
  const copy = copyFrom(
    `COPY product_import (kind, line, position, sku, label, account_id, code, magnitude, unit_code, description,
                          availability_state, classification, product_group, stock_zone, overbooking_allowed,
                          dimension, details, no_products, allowed_sku)
     FROM STDIN`,
  );
  // pg reads its client-side timeout from the query; the pool's (DB_STATEMENT_TIMEOUT_MS) would end a long upload.
  return Object.assign(copy, { query_timeout: timeoutMs });
}

type CopyValue = string | number | boolean | null;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One line of COPY's text format: tab-separated, `\N` for NULL, backslash and line breaks escaped. */
function copyRow(values: readonly CopyValue[]): string {
  let row = '';
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (index > 0) row += '\t';
    row +=
      value === null || value === undefined ? '\\N' : String(value).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!);
  }
  return `${row}\n`;
}

export function importRowOfProduct(line: number, product: ProductValues): string {
  return copyRow([
    'p',
    line,
    null,
    product.sku,
    product.label,
    product.accountId,
    null,
    product.baseUnitMagnitude,
    product.baseUnitCode,
    product.description,
    product.availabilityState,
    product.classification,
    product.group,
    product.stockZone,
    product.overbookingAllowed,
    product.dimension,
    product.details,
    null,
    null,
  ]);
}

export function importRowOfUnit(line: number, unit: ProductUnitValues): string {
  return copyRow([
    'u',
    line,
    unit.position,
    unit.sku,
    unit.label,
    null,
    unit.code,
    unit.magnitude,
    unit.unitCode,
    unit.description,
    null,
    null,
    null,
    null,
    null,
    unit.dimension,
    unit.details,
    null,
    null,
  ]);
}

export function importRowOfRule(line: number, rule: StackingRuleValues): string {
  return copyRow(['r', line, rule.position, rule.sku, ...Array<null>(13).fill(null), rule.noProducts, rule.allowedSku]);
}

/** D10: stacking rules naming a SKU that neither the import nor the store holds (the first `limit`, or all). */
export async function unknownStackedProducts(
  tx: Tx,
  limit: number | null,
): Promise<{ line: number; position: number; sku: string }[]> {
  const result = await tx.query<{ line: number; position: number; sku: string }>(
    `SELECT r.line, r.position, r.allowed_sku AS sku
       FROM product_import r
      WHERE r.kind = 'r'
        AND NOT EXISTS (SELECT 1 FROM product_import p WHERE p.kind = 'p' AND p.sku = r.allowed_sku)
        AND NOT EXISTS (SELECT 1 FROM product p WHERE p.sku = r.allowed_sku)
      ORDER BY r.line, r.position
      LIMIT $1`,
    [limit],
  );
  return result.rows;
}

/**
 * Inserts the imported products in line order, so their ids (and the list of all Products) follow the body. A SKU
 * sent twice or already stored fails the statement on product_sku_unique.
 */
export async function insertImportedProducts(tx: Tx): Promise<void> {
  await tx.query(
    `INSERT INTO product (sku, label, account_id, base_unit_magnitude, base_unit_code, description, availability_state,
                          classification, product_group, stock_zone, overbooking_allowed, dimension, details)
     SELECT sku, label, account_id, magnitude, unit_code, description, COALESCE(availability_state, 'AVAILABLE'),
            classification, product_group, stock_zone, COALESCE(overbooking_allowed, false), dimension, details
       FROM product_import
      WHERE kind = 'p'
      ORDER BY line`,
  );
}

/** D10's 409: the SKUs sent twice or already stored, in the order of their first line (the first `limit`, or all). */
export async function conflictingImportedSkus(tx: Tx, limit: number | null): Promise<string[]> {
  const result = await tx.query<{ sku: string }>(
    `SELECT i.sku
       FROM product_import i
      WHERE i.kind = 'p'
      GROUP BY i.sku
     HAVING count(*) > 1 OR EXISTS (SELECT 1 FROM product p WHERE p.sku = i.sku)
      ORDER BY min(i.line)
      LIMIT $1`,
    [limit],
  );
  return result.rows.map((row) => row.sku);
}

export async function insertImportedUnits(tx: Tx): Promise<void> {
  await tx.query(
    `INSERT INTO product_unit (product_id, position, label, code, description, quantity_magnitude, quantity_code,
                               dimension, details)
     SELECT p.id, i.position, i.label, i.code, i.description, i.magnitude, i.unit_code, i.dimension, i.details
       FROM product_import i JOIN product p ON p.sku = i.sku
      WHERE i.kind = 'u'`,
  );
}

/** Answers how many rules were stored: fewer than were sent means one named no product. */
export async function insertImportedRules(tx: Tx): Promise<number> {
  const result = await tx.query(
    `INSERT INTO stacking_rule (product_id, position, no_products, allowed_product_id)
     SELECT p.id, i.position, i.no_products, a.id
       FROM product_import i JOIN product p ON p.sku = i.sku JOIN product a ON a.sku = i.allowed_sku
      WHERE i.kind = 'r'`,
  );
  return result.rowCount ?? 0;
}

/**
 * D27: one `product.event.created` per imported Product in line order, rendered by product_json (migration 0008).
 * The staging rows are sorted (OFFSET 0 keeps that sort apart), then rendered in that order: only the narrow rows
 * are sorted. Answers how many were written and, when asked (one Product), its pKey.
 */
export async function insertImportedProductEvents(
  tx: Tx,
  requestId: string,
  answerKey: boolean,
): Promise<{ written: number; pKey: string | undefined }> {
  const result = await tx.query<{ pKey: string }>(
    `INSERT INTO event_outbox (type, resource_key, request_id, resource)
     SELECT 'product.event.created', r.p_key, $1, r.resource
       FROM (SELECT line, sku FROM product_import WHERE kind = 'p' ORDER BY line OFFSET 0) i
            CROSS JOIN LATERAL product_json(i.sku) r
      ORDER BY i.line
     ${answerKey ? 'RETURNING resource_key AS "pKey"' : ''}`,
    [requestId],
  );
  return { written: result.rowCount ?? 0, pKey: result.rows[0]?.pKey };
}
