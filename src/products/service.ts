import { asUuid } from '../db/keys.js';
import type { Queryable, Tx } from '../db/tx.js';
import { appendEvents } from '../events/outbox.js';
import { jsonTextOrNull } from '../json.js';
import { Quantity } from '../units/quantity.js';
import { unitByCode } from '../units/units.js';
import { parseUomExpression } from '../units/uom.js';
import { notFoundWithoutBody } from '../http/api-error.js';
import type { Version } from '../http/validators.js';
import { deletedProductEvent, productEvent } from './events.js';
import { productErrors } from './messages.js';
import type { ProductInput, ProductUpdateInput } from './schemas.js';
import {
  deleteProductRow,
  deleteUnitsAndRulesOf,
  existingSkus,
  insertProductUnits,
  insertStackingRules,
  isSkuTaken,
  lockProductByPKey,
  selectProductByPKey,
  selectProductBySku,
  selectProductReferenceByPKey,
  selectProductReferences,
  updateProductRow,
  usagesOfProduct,
  type ProductReference,
  type ProductRow,
  type ProductUnitValues,
  type ProductValues,
  type StackingRuleValues,
} from './sql.js';

export function productValues(product: ProductInput): ProductValues {
  return {
    sku: product.sku,
    label: product.label ?? null,
    accountId: product.accountId ?? null,
    baseUnitMagnitude: product.baseUnit.magnitude.toString(),
    baseUnitCode: product.baseUnit.unitCode,
    description: product.description ?? null,
    availabilityState: product.availabilityState ?? null,
    classification: product.classification ?? null,
    group: product.group ?? null,
    stockZone: product.stockZone ?? null,
    overbookingAllowed: product.overbookingAllowed ?? null,
    dimension: jsonTextOrNull(product.dimension),
    details: jsonTextOrNull(product.details),
  };
}

export function unitValues(product: ProductInput): ProductUnitValues[] {
  return (product.units ?? []).map((unit, position) => ({
    sku: product.sku,
    position,
    label: unit.label ?? null,
    code: unit.code ?? null,
    description: unit.description ?? null,
    magnitude: unit.quantity.magnitude.toString(),
    unitCode: unit.quantity.unitCode,
    dimension: jsonTextOrNull(unit.dimension),
    details: jsonTextOrNull(unit.details),
  }));
}

export function ruleValues(product: ProductInput): StackingRuleValues[] {
  return (product.stackingRules ?? []).map((rule, position) => ({
    sku: product.sku,
    position,
    noProducts: rule.noProducts,
    allowedSku: rule.allowedProduct.sku,
  }));
}

/** D10: a stacking rule may name a product of the same request or a stored one, nothing else. */
async function checkStackedProductsExist(
  db: Queryable,
  products: readonly ProductInput[],
  pathPrefix: (index: number) => string,
): Promise<void> {
  const requested = new Set(products.map((product) => product.sku));
  const named = products.flatMap((product, index) =>
    (product.stackingRules ?? []).map((rule, ruleIndex) => ({
      sku: rule.allowedProduct.sku,
      path: `${pathPrefix(index)}stackingRules[${ruleIndex}].allowedProduct.sku`,
    })),
  );
  const outside = named.filter((rule) => !requested.has(rule.sku));
  if (outside.length === 0) return;
  const stored = await existingSkus(db, [...new Set(outside.map((rule) => rule.sku))]);
  const unknown = outside.filter((rule) => !stored.has(rule.sku));
  if (unknown.length > 0) throw productErrors.unknownStackedProducts(unknown);
}

export async function findProductBySku(db: Queryable, sku: string): Promise<ProductRow> {
  const product = await selectProductBySku(db, sku);
  if (!product) throw productErrors.notFoundBySku(sku);
  return product;
}

export async function findProductByPKey(db: Queryable, pKey: string): Promise<ProductRow> {
  const key = asUuid(pKey);
  const product = key ? await selectProductByPKey(db, key) : undefined;
  if (!product) throw productErrors.notFoundByPKey(pKey);
  return product;
}

/**
 * D11: the UOM must be valid and one of the product's: its base unit or one of its units, by code alone
 * or by exactly that amount and code. Otherwise 404 with no body.
 */
export async function findProductBySkuAndUom(db: Queryable, sku: string, uom: string): Promise<ProductRow> {
  const product = await findProductBySku(db, sku);
  const expression = parseUomExpression(uom);
  if (!expression) throw notFoundWithoutBody(`'${uom}' is not a unit-of-measure expression`);
  const quantities = [
    Quantity.of(product.baseUnitMagnitude, product.baseUnitCode),
    ...product.units.map((unit) => Quantity.of(unit.magnitude, unit.unitCode)),
  ];
  const matches = quantities.some(
    (quantity) =>
      quantity.unitCode === expression.unit.code &&
      (expression.amount === undefined || quantity.magnitude.equals(expression.amount)),
  );
  if (!matches) throw notFoundWithoutBody(`Product [${sku}] has no unit of measure '${uom}'`);
  return product;
}

/**
 * D12: a full replacement under the row lock; a sent `ol` must match the stored one. `checkVersion` sees the
 * Product as locked, before anything changes, and throws to refuse (D33's If-Match).
 */
export async function updateProduct(
  tx: Tx,
  input: ProductUpdateInput,
  requestId: string,
  checkVersion: (version: Version) => void = () => undefined,
): Promise<ProductRow> {
  const key = asUuid(input.pKey);
  const current = key ? await lockProductByPKey(tx, key) : undefined;
  if (!key || !current) throw productErrors.notFoundByPKey(input.pKey);
  checkVersion([key, current.ol]);
  if (input.ol !== undefined && input.ol !== null && input.ol !== current.ol) {
    throw productErrors.changedUnexpectedly(input.pKey);
  }
  try {
    await updateProductRow(tx, current.id, productValues(input));
  } catch (error) {
    throw isSkuTaken(error) ? productErrors.alreadyExists([input.sku]) : error;
  }
  // Checked after a rename: a rule naming the product's old SKU names nothing any more.
  await checkStackedProductsExist(tx, [input], () => '');
  await deleteUnitsAndRulesOf(tx, current.id);
  await insertProductUnits(tx, unitValues(input));
  await insertStackingRules(tx, ruleValues(input));
  const updated = await findProductByPKey(tx, key);
  await appendEvents(tx, [productEvent('product.event.updated', updated)], requestId);
  return updated;
}

/** D13: refused with a message-only 403 while anything still refers to the product. */
export async function deleteProduct(
  tx: Tx,
  pKey: string,
  requestId: string,
  checkVersion: (version: Version) => void = () => undefined,
): Promise<void> {
  const key = asUuid(pKey);
  const product = key ? await lockProductByPKey(tx, key) : undefined;
  if (!key || !product) throw productErrors.notFoundByPKey(pKey);
  checkVersion([key, product.ol]);
  const usages = await usagesOfProduct(tx, product.id);
  if (usages.length > 0) throw productErrors.stillInUse(product.sku, usages.join(' and '));
  await deleteProductRow(tx, product.id);
  await appendEvents(tx, [deletedProductEvent({ pKey: key, sku: product.sku })], requestId);
}

/** D2: an amount of a Product is measured in the kind of the Product's base unit; otherwise a 400 naming `path`. */
export function requireProductKind(quantity: Quantity | null | undefined, productBaseCode: string, path: string): void {
  const kind = unitByCode(productBaseCode)?.kind;
  if (quantity && kind && quantity.kind !== kind) throw productErrors.quantityOfAnotherKind(path, kind);
}

/** The products named by SKU; the first unknown SKU is the `not.found` 404 (D18, D23). */
export async function requireProductReferences(
  db: Queryable,
  skus: readonly string[],
): Promise<Map<string, ProductReference>> {
  const found = new Map(
    (await selectProductReferences(db, [...new Set(skus)])).map((product) => [product.sku, product]),
  );
  const unknown = skus.find((sku) => !found.has(sku));
  if (unknown !== undefined) throw productErrors.notFoundBySku(unknown);
  return found;
}

/** The product with this SKU, or the `not.found` 404. */
export async function requireProductReference(db: Queryable, sku: string): Promise<ProductReference> {
  return (await requireProductReferences(db, [sku])).get(sku)!;
}

export async function requireProductReferenceByPKey(db: Queryable, pKey: string): Promise<ProductReference> {
  const key = asUuid(pKey);
  const product = key ? await selectProductReferenceByPKey(db, key) : undefined;
  if (!product) throw productErrors.notFoundByPKey(pKey);
  return product;
}
