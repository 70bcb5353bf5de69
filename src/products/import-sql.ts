import { copyRow } from '../db/copy.js';
import type { Tx } from '../db/tx.js';
import { activeTraceparent } from '../tracing/context.js';
import type { ProductUnitValues, ProductValues, StackingRuleValues } from './sql.js';

/** What an import does with a SKU that is stored already (D35); a SKU sent twice is a 409 in every mode. */
export type OnConflict = 'fail' | 'skip' | 'update';

/**
 * The staging table of one streamed import: a product, each of its units and each of its stacking rules is one row
 * (`kind` p, u, r), so that a single COPY carries them all; `line` is the body line that sent it. `outcome` says
 * what becomes of the rows of a SKU: c(reated), u(pdated), or NULL (skipped); with `fail` every row is created.
 * `stored`: the Product of the SKU is stored and locked by this import (lockStoredImportedProducts).
 * Temporary and dropped at commit: the session's own, written without WAL.
 */
export async function createImportTable(tx: Tx, onConflict: OnConflict): Promise<void> {
  await tx.query(
    `CREATE TEMPORARY TABLE product_import (
       kind "char" NOT NULL, line integer NOT NULL, position integer, sku text NOT NULL, label text, account_id text,
       code text, magnitude numeric, unit_code text, description text, availability_state text, classification text,
       product_group text, stock_zone text, overbooking_allowed boolean, dimension json, details json,
       no_products integer, allowed_sku text, outcome "char" ${onConflict === 'fail' ? `DEFAULT 'c'` : ''},
       stored boolean
     ) ON COMMIT DROP`,
  );
}

export async function analyzeImportTable(tx: Tx): Promise<void> {
  await tx.query('ANALYZE product_import');
}

/** The COPY that fills the staging table; rows are written with the importRow* functions below. */
export const COPY_INTO_IMPORT_TABLE = `COPY product_import (kind, line, position, sku, label, account_id, code, magnitude,
                                   unit_code, description, availability_state, classification, product_group,
                                   stock_zone, overbooking_allowed, dimension, details, no_products, allowed_sku)
     FROM STDIN`;

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

/**
 * D38: locks the stored Products the import names, in id order, and marks their lines `stored`: `update` for the
 * update it may make, `skip` against a delete (FOR KEY SHARE lets other changes of the Product go on). What skip and
 * update then decide holds until commit: a Product deleted meanwhile is either found deleted here (its line is
 * created) or its delete waits for the import. Deciding from a snapshot instead reported a line skipped whose
 * Product a concurrent delete had just removed.
 */
export async function lockStoredImportedProducts(tx: Tx, onConflict: Exclude<OnConflict, 'fail'>): Promise<void> {
  await tx.query(
    `WITH locked AS (
       SELECT p.sku FROM product p JOIN product_import i ON i.kind = 'p' AND i.sku = p.sku
        ORDER BY p.id FOR ${onConflict === 'update' ? 'UPDATE' : 'KEY SHARE'} OF p)
     UPDATE product_import i SET stored = true FROM locked l WHERE i.sku = l.sku`,
  );
}

/**
 * Inserts the imported Products not stored (and locked) yet, in line order (skip, update), and marks them created;
 * one another request created meanwhile stays unmarked, as if stored before.
 */
export async function insertNewImportedProducts(tx: Tx): Promise<void> {
  await tx.query(
    `WITH created AS (
       INSERT INTO product (sku, label, account_id, base_unit_magnitude, base_unit_code, description,
                            availability_state, classification, product_group, stock_zone, overbooking_allowed,
                            dimension, details)
       SELECT sku, label, account_id, magnitude, unit_code, description, COALESCE(availability_state, 'AVAILABLE'),
              classification, product_group, stock_zone, COALESCE(overbooking_allowed, false), dimension, details
         FROM product_import i
        WHERE kind = 'p' AND stored IS NOT TRUE
        ORDER BY line
       ON CONFLICT (sku) DO NOTHING
       RETURNING sku)
     UPDATE product_import i SET outcome = 'c' FROM created c WHERE i.sku = c.sku`,
  );
}

/**
 * D35's update: marks the stored Products whose line differs from them in any field, unit or stacking rule (D12's
 * full replacement would change them); lockStoredImportedProducts has locked them. Quantities compare by value, JSON by
 * content. Units and rules are gathered per SKU on both sides first, so the comparison is a few hash joins however
 * many Products the import holds.
 */
export async function markChangedImportedProducts(tx: Tx): Promise<void> {
  await tx.query(
    `WITH stored AS (
       SELECT p.*, i.label AS new_label, i.account_id AS new_account_id, i.magnitude AS new_magnitude,
              i.unit_code AS new_unit_code, i.description AS new_description,
              COALESCE(i.availability_state, 'AVAILABLE') AS new_availability_state,
              i.classification AS new_classification, i.product_group AS new_product_group,
              i.stock_zone AS new_stock_zone, COALESCE(i.overbooking_allowed, false) AS new_overbooking_allowed,
              i.dimension AS new_dimension, i.details AS new_details
         FROM product p JOIN product_import i ON i.kind = 'p' AND i.sku = p.sku
        WHERE i.outcome IS NULL),
     sent_units AS (
       SELECT sku, array_agg((position, label, code, description, magnitude, unit_code, dimension::jsonb,
                              details::jsonb) ORDER BY position) AS units
         FROM product_import WHERE kind = 'u' AND outcome IS NULL GROUP BY sku),
     stored_units AS (
       SELECT s.sku, array_agg((u.position, u.label, u.code, u.description, u.quantity_magnitude, u.quantity_code,
                                u.dimension::jsonb, u.details::jsonb) ORDER BY u.position) AS units
         FROM stored s JOIN product_unit u ON u.product_id = s.id GROUP BY s.sku),
     sent_rules AS (
       SELECT sku, array_agg((position, no_products, allowed_sku) ORDER BY position) AS rules
         FROM product_import WHERE kind = 'r' AND outcome IS NULL GROUP BY sku),
     stored_rules AS (
       SELECT s.sku, array_agg((r.position, r.no_products, a.sku) ORDER BY r.position) AS rules
         FROM stored s JOIN stacking_rule r ON r.product_id = s.id JOIN product a ON a.id = r.allowed_product_id
        GROUP BY s.sku),
     changed AS (
       SELECT s.sku
         FROM stored s
              LEFT JOIN sent_units su ON su.sku = s.sku LEFT JOIN stored_units tu ON tu.sku = s.sku
              LEFT JOIN sent_rules sr ON sr.sku = s.sku LEFT JOIN stored_rules tr ON tr.sku = s.sku
        WHERE (s.label, s.account_id, s.base_unit_magnitude, s.base_unit_code, s.description, s.availability_state,
               s.classification, s.product_group, s.stock_zone, s.overbooking_allowed, s.dimension::jsonb,
               s.details::jsonb)
              IS DISTINCT FROM
              (s.new_label, s.new_account_id, s.new_magnitude, s.new_unit_code, s.new_description,
               s.new_availability_state, s.new_classification, s.new_product_group, s.new_stock_zone,
               s.new_overbooking_allowed, s.new_dimension::jsonb, s.new_details::jsonb)
           OR su.units IS DISTINCT FROM tu.units
           OR sr.rules IS DISTINCT FROM tr.rules)
     UPDATE product_import i SET outcome = 'u' FROM changed c WHERE i.sku = c.sku`,
  );
}

/** How many of the imported Products were created and how many updated. */
export async function importOutcomes(tx: Tx): Promise<{ created: number; updated: number }> {
  const result = await tx.query<{ created: number; updated: number }>(
    `SELECT count(*) FILTER (WHERE outcome = 'c')::int AS created, count(*) FILTER (WHERE outcome = 'u')::int AS updated
       FROM product_import WHERE kind = 'p'`,
  );
  return result.rows[0]!;
}

/** D12 applied to every Product marked changed: its fields replaced, `ol` raised, its units and rules removed. */
export async function updateChangedImportedProducts(tx: Tx): Promise<void> {
  await tx.query(
    `UPDATE product p
        SET label = i.label, account_id = i.account_id, base_unit_magnitude = i.magnitude,
            base_unit_code = i.unit_code, description = i.description,
            availability_state = COALESCE(i.availability_state, 'AVAILABLE'), classification = i.classification,
            product_group = i.product_group, stock_zone = i.stock_zone,
            overbooking_allowed = COALESCE(i.overbooking_allowed, false), dimension = i.dimension,
            details = i.details, ol = p.ol + 1, last_modified_dt = now()
       FROM product_import i
      WHERE i.kind = 'p' AND i.outcome = 'u' AND p.sku = i.sku`,
  );
  await tx.query(
    `DELETE FROM product_unit u USING product_import i, product p
      WHERE i.kind = 'p' AND i.outcome = 'u' AND p.sku = i.sku AND u.product_id = p.id`,
  );
  await tx.query(
    `DELETE FROM stacking_rule r USING product_import i, product p
      WHERE i.kind = 'p' AND i.outcome = 'u' AND p.sku = i.sku AND r.product_id = p.id`,
  );
}

/**
 * D10's 409: the SKUs sent twice, or (`stored`) already stored too, in the order of their first line (the first
 * `limit`, or all).
 */
export async function conflictingImportedSkus(tx: Tx, limit: number | null, stored: boolean): Promise<string[]> {
  const result = await tx.query<{ sku: string }>(
    `SELECT i.sku
       FROM product_import i
      WHERE i.kind = 'p'
      GROUP BY i.sku
     HAVING count(*) > 1 OR $2 AND EXISTS (SELECT 1 FROM product p WHERE p.sku = i.sku)
      ORDER BY min(i.line)
      LIMIT $1`,
    [limit, stored],
  );
  return result.rows.map((row) => row.sku);
}

export async function insertImportedUnits(tx: Tx): Promise<void> {
  await tx.query(
    `INSERT INTO product_unit (product_id, position, label, code, description, quantity_magnitude, quantity_code,
                               dimension, details)
     SELECT p.id, i.position, i.label, i.code, i.description, i.magnitude, i.unit_code, i.dimension, i.details
       FROM product_import i JOIN product p ON p.sku = i.sku
      WHERE i.kind = 'u' AND i.outcome IS NOT NULL`,
  );
}

/** Answers how many rules were stored: fewer than were to be stored means one named no product. */
export async function insertImportedRules(tx: Tx): Promise<number> {
  const result = await tx.query(
    `INSERT INTO stacking_rule (product_id, position, no_products, allowed_product_id)
     SELECT p.id, i.position, i.no_products, a.id
       FROM product_import i JOIN product p ON p.sku = i.sku JOIN product a ON a.sku = i.allowed_sku
      WHERE i.kind = 'r' AND i.outcome IS NOT NULL`,
  );
  return result.rowCount ?? 0;
}

/** How many stacking rules of Products being created or updated the import holds. */
export async function importedRulesToStore(tx: Tx): Promise<number> {
  const result = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM product_import WHERE kind = 'r' AND outcome IS NOT NULL`,
  );
  return result.rows[0]!.n;
}

/**
 * D27: one `product.event.created` per imported Product created, one `product.event.updated` per one updated, in
 * line order, rendered by product_json (migration 0008).
 * The staging rows are sorted (OFFSET 0 keeps that sort apart), then rendered in that order: only the narrow rows
 * are sorted. Answers how many were written and, when asked (one Product), its pKey.
 */
export async function insertImportedProductEvents(
  tx: Tx,
  requestId: string,
  answerKey: boolean,
): Promise<{ written: number; pKey: string | undefined }> {
  const result = await tx.query<{ pKey: string }>(
    `INSERT INTO event_outbox (type, resource_key, request_id, traceparent, resource)
     SELECT CASE i.outcome WHEN 'c' THEN 'product.event.created' ELSE 'product.event.updated' END, r.p_key, $1,
            $2::text, r.resource
       FROM (SELECT line, sku, outcome FROM product_import WHERE kind = 'p' AND outcome IS NOT NULL
              ORDER BY line OFFSET 0) i
            CROSS JOIN LATERAL product_json(i.sku) r
      ORDER BY i.line
     ${answerKey ? 'RETURNING resource_key AS "pKey"' : ''}`,
    [requestId, activeTraceparent()],
  );
  return { written: result.rowCount ?? 0, pKey: result.rows[0]?.pKey };
}
