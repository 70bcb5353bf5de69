import { linksSchema, type Link } from '../http/links.js';
import { put, type Json } from '../http/view.js';
import type { Version } from '../http/validators.js';
import { z } from '../openapi/zod.js';
import { Quantity } from '../units/quantity.js';
import type { ProductRow, ProductUnitRow } from './sql.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';

/** Stored as the request gave it (D9), so nulls the client sent come back. */
const dimensionValue = z.number().nullable().optional();

const dimensionSchema = z
  .object({
    height: dimensionValue,
    length: dimensionValue,
    width: dimensionValue,
    uom: z.string().nullable().optional(),
  })
  .strict();

const detailsValue = z.record(z.string(), z.unknown()).openapi({ description: 'Kept exactly as sent' });

const productUnitSchema = z
  .object({
    pKey: z.string(),
    label: z.string().optional(),
    code: z.string().optional(),
    description: z.string().optional(),
    quantity: quantityResponseSchema,
    dimension: dimensionSchema.optional(),
    details: detailsValue.optional(),
  })
  .strict()
  .openapi('ProductUnitResponse', { description: 'A unit of a Product as read' });

/** A Product's fields as `productView` writes them, absent optional fields left out. */
const productFields = {
  pKey: z.string(),
  sku: z.string(),
  label: z.string().optional(),
  accountId: z.string().optional(),
  baseUnit: quantityResponseSchema,
  description: z.string().optional(),
  availabilityState: z.enum(['LOCKED', 'QC_LOCKED', 'AVAILABLE']),
  classification: z.string().optional(),
  group: z.string().optional(),
  stockZone: z.enum(['A', 'B', 'C']).optional(),
  overbookingAllowed: z.boolean(),
  units: z.array(productUnitSchema),
  dimension: dimensionSchema.optional(),
  stackingRules: z.array(
    z.object({ noProducts: z.number().int(), allowedProduct: z.object({ sku: z.string() }).strict() }).strict(),
  ),
  details: detailsValue.optional(),
  ol: z.number().int(),
  createDt: z.iso.datetime(),
};

/** The plain JSON form of a Product, as in the list of all Products (D7). */
export const productSchema = z.object(productFields).strict().openapi('Product');

/** The single Product resource (HAL), as `productResource` writes it. */
export const productResourceSchema = z
  .object({
    ...productFields,
    _links: linksSchema(['self', 'packaging-units', 'stock']),
  })
  .strict()
  .openapi('ProductResource');

/** Leaves out what is absent, so a read gives back what was sent (D9). */
function unitView(unit: ProductUnitRow): Json {
  const view: Json = { pKey: unit.pKey };
  put(view, 'label', unit.label);
  put(view, 'code', unit.code);
  put(view, 'description', unit.description);
  view.quantity = Quantity.of(unit.magnitude, unit.unitCode);
  put(view, 'dimension', unit.dimension);
  put(view, 'details', unit.details);
  return view;
}

/** A Product with the spec's fields in the spec's order. */
export function productView(product: ProductRow): Json {
  const view: Json = { pKey: product.pKey, sku: product.sku };
  put(view, 'label', product.label);
  put(view, 'accountId', product.accountId);
  view.baseUnit = Quantity.of(product.baseUnitMagnitude, product.baseUnitCode);
  put(view, 'description', product.description);
  view.availabilityState = product.availabilityState;
  put(view, 'classification', product.classification);
  put(view, 'group', product.group);
  put(view, 'stockZone', product.stockZone);
  view.overbookingAllowed = product.overbookingAllowed;
  view.units = product.units.map(unitView);
  put(view, 'dimension', product.dimension);
  view.stackingRules = product.stackingRules.map((rule) => ({
    noProducts: rule.noProducts,
    allowedProduct: { sku: rule.sku },
  }));
  put(view, 'details', product.details);
  view.ol = product.ol;
  view.createDt = product.createDt.toISOString();
  return view;
}

export function productResource(product: ProductRow, link: (path: string) => string): Json {
  const links: Record<string, Link> = {
    self: { href: link(`/v1/products/${product.pKey}`) },
    'packaging-units': { href: link(`/v1/packaging-units?sku=${encodeURIComponent(product.sku)}`) },
    stock: { href: link(`/v1/stock?sku=${encodeURIComponent(product.sku)}`) },
  };
  // Added to the view rather than to a copy of it: the same keys in the same order (issue 38 item 4).
  const resource = productView(product);
  resource._links = links;
  return resource;
}

/** The Product's entity tag (D33) is of its own row: its units and stacking rules change only with it. */
export function productVersion(product: ProductRow): Version {
  return [product.pKey, product.ol];
}
