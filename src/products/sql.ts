import { arrayLiteral, columnOf } from '../db/columns.js';
import type { Queryable, Tx } from '../db/tx.js';

/** A product row with its units and stacking rules, as every read returns it. */
export interface ProductRow {
  id: number;
  pKey: string;
  sku: string;
  label: string | null;
  accountId: string | null;
  baseUnitMagnitude: string;
  baseUnitCode: string;
  description: string | null;
  availabilityState: string;
  classification: string | null;
  group: string | null;
  stockZone: string | null;
  overbookingAllowed: boolean;
  dimension: Record<string, unknown> | null;
  details: Record<string, unknown> | null;
  ol: number;
  createDt: Date;
  units: ProductUnitRow[];
  stackingRules: { noProducts: number; sku: string }[];
}

export interface ProductUnitRow {
  pKey: string;
  label: string | null;
  code: string | null;
  description: string | null;
  magnitude: string;
  unitCode: string;
  dimension: Record<string, unknown> | null;
  details: Record<string, unknown> | null;
}

/** Column values of one product, as the bulk statements take them (one array per column). */
export interface ProductValues {
  sku: string;
  label: string | null;
  accountId: string | null;
  baseUnitMagnitude: string;
  baseUnitCode: string;
  description: string | null;
  availabilityState: string | null;
  classification: string | null;
  group: string | null;
  stockZone: string | null;
  overbookingAllowed: boolean | null;
  dimension: string | null;
  details: string | null;
}

export interface ProductUnitValues {
  sku: string;
  position: number;
  label: string | null;
  code: string | null;
  description: string | null;
  magnitude: string;
  unitCode: string;
  dimension: string | null;
  details: string | null;
}

export interface StackingRuleValues {
  sku: string;
  position: number;
  noProducts: number;
  allowedSku: string;
}

// Magnitudes travel as text so no digit is lost; units and rules come along in one round trip.
export const PRODUCT_COLUMNS = `
  p.id, p.p_key AS "pKey", p.sku, p.label, p.account_id AS "accountId",
  p.base_unit_magnitude::text AS "baseUnitMagnitude", p.base_unit_code AS "baseUnitCode",
  p.description, p.availability_state AS "availabilityState", p.classification, p.product_group AS "group",
  p.stock_zone AS "stockZone", p.overbooking_allowed AS "overbookingAllowed", p.dimension, p.details, p.ol,
  p.create_dt AS "createDt",
  COALESCE((SELECT json_agg(json_build_object(
      'pKey', u.p_key, 'label', u.label, 'code', u.code, 'description', u.description,
      'magnitude', u.quantity_magnitude::text, 'unitCode', u.quantity_code,
      'dimension', u.dimension, 'details', u.details) ORDER BY u.position)
    FROM product_unit u WHERE u.product_id = p.id), '[]'::json) AS units,
  COALESCE((SELECT json_agg(json_build_object('noProducts', r.no_products, 'sku', a.sku) ORDER BY r.position)
    FROM stacking_rule r JOIN product a ON a.id = r.allowed_product_id WHERE r.product_id = p.id), '[]'::json)
    AS "stackingRules"`;

/** Whether a write failed because the SKU belongs to another product: the unique index decides, also in a race. */
export function isSkuTaken(error: unknown): boolean {
  return (
    (error as { code?: string; constraint?: string }).code === '23505' &&
    (error as { constraint?: string }).constraint === 'product_sku_unique'
  );
}

export async function insertProductUnits(tx: Tx, units: readonly ProductUnitValues[]): Promise<void> {
  if (units.length === 0) return;
  await tx.query(
    `INSERT INTO product_unit (product_id, position, label, code, description, quantity_magnitude, quantity_code,
                               dimension, details)
     SELECT p.id, v.position, v.label, v.code, v.description, v.magnitude, v.unit_code, v.dimension, v.details
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::text[], $8::json[],
                   $9::json[]) AS v(sku, position, label, code, description, magnitude, unit_code, dimension, details)
       JOIN product p ON p.sku = v.sku`,
    [
      columnOf(units, 'sku'),
      columnOf(units, 'position'),
      columnOf(units, 'label'),
      columnOf(units, 'code'),
      columnOf(units, 'description'),
      columnOf(units, 'magnitude'),
      columnOf(units, 'unitCode'),
      columnOf(units, 'dimension'),
      columnOf(units, 'details'),
    ].map(arrayLiteral),
  );
}

export async function insertStackingRules(tx: Tx, rules: readonly StackingRuleValues[]): Promise<void> {
  if (rules.length === 0) return;
  const result = await tx.query(
    `INSERT INTO stacking_rule (product_id, position, no_products, allowed_product_id)
     SELECT p.id, v.position, v.no_products, a.id
       FROM unnest($1::text[], $2::int[], $3::int[], $4::text[]) AS v(sku, position, no_products, allowed_sku)
       JOIN product p ON p.sku = v.sku
       JOIN product a ON a.sku = v.allowed_sku`,
    [
      columnOf(rules, 'sku'),
      columnOf(rules, 'position'),
      columnOf(rules, 'noProducts'),
      columnOf(rules, 'allowedSku'),
    ].map(arrayLiteral),
  );
  // The service checks the SKUs first; a rule that still found no product must not vanish silently.
  if (result.rowCount !== rules.length) throw new Error('a stacking rule names a product that does not exist');
}

export async function existingSkus(db: Queryable, skus: readonly string[]): Promise<Set<string>> {
  const result = await db.query<{ sku: string }>('SELECT sku FROM product WHERE sku = ANY($1::text[])', [skus]);
  return new Set(result.rows.map((row) => row.sku));
}

export async function selectProductBySku(db: Queryable, sku: string): Promise<ProductRow | undefined> {
  const result = await db.query<ProductRow>({
    name: 'product-by-sku',
    text: `SELECT ${PRODUCT_COLUMNS} FROM product p WHERE p.sku = $1`,
    values: [sku],
  });
  return result.rows[0];
}

export async function selectProductByPKey(db: Queryable, pKey: string): Promise<ProductRow | undefined> {
  const result = await db.query<ProductRow>({
    name: 'product-by-pkey',
    text: `SELECT ${PRODUCT_COLUMNS} FROM product p WHERE p.p_key = $1::uuid`,
    values: [pKey],
  });
  return result.rows[0];
}

export async function lockProductByPKey(
  tx: Tx,
  pKey: string,
): Promise<{ id: number; sku: string; ol: number } | undefined> {
  const result = await tx.query<{ id: number; sku: string; ol: number }>(
    'SELECT id, sku, ol FROM product WHERE p_key = $1::uuid FOR UPDATE',
    [pKey],
  );
  return result.rows[0];
}

/** A rename to a SKU another product has fails on product_sku_unique (see isSkuTaken). */
export async function updateProductRow(tx: Tx, id: number, values: ProductValues): Promise<void> {
  await tx.query(
    `UPDATE product
        SET sku = $2, label = $3, account_id = $4, base_unit_magnitude = $5::numeric, base_unit_code = $6,
            description = $7, availability_state = COALESCE($8, 'AVAILABLE'), classification = $9,
            product_group = $10, stock_zone = $11, overbooking_allowed = COALESCE($12, false), dimension = $13::json,
            details = $14::json, ol = ol + 1, last_modified_dt = now()
      WHERE id = $1`,
    [
      id,
      values.sku,
      values.label,
      values.accountId,
      values.baseUnitMagnitude,
      values.baseUnitCode,
      values.description,
      values.availabilityState,
      values.classification,
      values.group,
      values.stockZone,
      values.overbookingAllowed,
      values.dimension,
      values.details,
    ],
  );
}

export async function deleteUnitsAndRulesOf(tx: Tx, productId: number): Promise<void> {
  await tx.query('DELETE FROM product_unit WHERE product_id = $1', [productId]);
  await tx.query('DELETE FROM stacking_rule WHERE product_id = $1', [productId]);
}

/** What still refers to a product, in the words of the 403 message; empty when it may be deleted. */
export async function usagesOfProduct(tx: Tx, productId: number): Promise<string[]> {
  const result = await tx.query<{ usage: string }>(
    `SELECT 'PackagingUnits' AS usage WHERE EXISTS (SELECT 1 FROM packaging_unit WHERE product_id = $1)
     UNION ALL
     SELECT 'LoadUnits' WHERE EXISTS (SELECT 1 FROM load_unit WHERE product_id = $1)
     UNION ALL
     SELECT 'unit of measure definitions' WHERE EXISTS (SELECT 1 FROM product_unit WHERE product_id = $1)
     UNION ALL
     SELECT 'stacking rules of other products' WHERE EXISTS (SELECT 1 FROM stacking_rule WHERE allowed_product_id = $1)
     UNION ALL
     -- Reservations name their Product by foreign key (migration 0012) and are kept after they end (D32).
     SELECT 'reservations' WHERE EXISTS (SELECT 1 FROM reservation_life WHERE product_id = $1)`,
    [productId],
  );
  return result.rows.map((row) => row.usage);
}

export async function deleteProductRow(tx: Tx, productId: number): Promise<void> {
  await tx.query('DELETE FROM product WHERE id = $1', [productId]);
}

/**
 * One page of the list of all products, in insertion order: the next `limit` products after the one with id
 * `afterId` (0 before the first page: ids start at 1). A short range scan of the primary key per page.
 */
export async function selectProductsAfter(db: Queryable, afterId: number, limit: number): Promise<ProductRow[]> {
  const result = await db.query<ProductRow>({
    name: 'products-after',
    text: `SELECT ${PRODUCT_COLUMNS} FROM product p WHERE p.id > $1 ORDER BY p.id LIMIT $2`,
    values: [afterId, limit],
  });
  return result.rows;
}

/**
 * Where the page of `limit` products after the one with id `afterId` ends, when more follow it: the id of its last
 * product (the next page's cursor); undefined when the page is the last. A walk of at most `limit + 1` index entries.
 */
export async function selectProductPageEnd(db: Queryable, afterId: number, limit: number): Promise<number | undefined> {
  const result = await db.query<{ id: number }>({
    name: 'product-page-end',
    text: 'SELECT p.id FROM product p WHERE p.id > $1 ORDER BY p.id OFFSET $2 LIMIT 2',
    values: [afterId, limit - 1],
  });
  return result.rows.length === 2 ? result.rows[0]!.id : undefined;
}

/** Like `selectProductsAfter`, and only up to the product with id `throughId` when it is given. */
export async function selectProductsThrough(
  db: Queryable,
  afterId: number,
  throughId: number | undefined,
  limit: number,
): Promise<ProductRow[]> {
  const result = await db.query<ProductRow>({
    name: 'products-through',
    text: `SELECT ${PRODUCT_COLUMNS} FROM product p
            WHERE p.id > $1 AND ($2::bigint IS NULL OR p.id <= $2::bigint) ORDER BY p.id LIMIT $3`,
    values: [afterId, throughId ?? null, limit],
  });
  return result.rows;
}

/** The few product facts stock operations need. */
export interface ProductReference {
  id: number;
  pKey: string;
  sku: string;
  baseUnitCode: string;
  availabilityState: string;
}

export async function selectProductReferences(db: Queryable, skus: readonly string[]): Promise<ProductReference[]> {
  const result = await db.query<ProductReference>({
    name: 'product-references',
    text: `SELECT id, p_key AS "pKey", sku, base_unit_code AS "baseUnitCode", availability_state AS "availabilityState"
       FROM product WHERE sku = ANY($1::text[])`,
    values: [skus],
  });
  return result.rows;
}

export async function selectProductReferenceByPKey(db: Queryable, pKey: string): Promise<ProductReference | undefined> {
  const result = await db.query<ProductReference>(
    `SELECT id, p_key AS "pKey", sku, base_unit_code AS "baseUnitCode", availability_state AS "availabilityState"
       FROM product WHERE p_key = $1::uuid`,
    [pKey],
  );
  return result.rows[0];
}
