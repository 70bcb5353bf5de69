import { linkSchema, type Link } from '../http/links.js';
import type { Version } from '../http/validators.js';
import { put, type Json } from '../http/view.js';
import { z } from '../openapi/zod.js';
import { Quantity } from '../units/quantity.js';
import type { LoadUnitRow } from './sql.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';

/** Turns a path into an absolute href (the routes pass `path => href(req, path)`). */
export type HrefOf = (path: string) => string;

/**
 * What a LoadUnit embeds of its Product. A full products-feature ProductRow fits, so does the summary the
 * LoadUnit reads itself.
 */
export interface LoadUnitProduct {
  readonly pKey: string;
  readonly sku: string;
  readonly label: string | null;
  readonly baseUnitMagnitude: string;
  readonly baseUnitCode: string;
  readonly description?: string | null;
  readonly availabilityState?: string | null;
  readonly ol: number;
}

export const loadUnitPath = (pKey: string): string => `/v1/load-units/${pKey}`;
export const packagingUnitsInLoadUnitPath = (pKey: string): string => `/v1/load-units/${pKey}/packaging-units`;
export const loadUnitsOfTransportUnitPath = (transportUnitBK: string): string =>
  `/v1/transport-units/${encodeURIComponent(transportUnitBK)}/load-units`;

/** The partial Product `embeddedProductView` writes. */
export const loadUnitProductSchema = z
  .object({
    pKey: z.string(),
    sku: z.string(),
    label: z.string().optional(),
    baseUnit: quantityResponseSchema,
    description: z.string().optional(),
    availabilityState: z.enum(['LOCKED', 'QC_LOCKED', 'AVAILABLE']).optional(),
  })
  .strict()
  .openapi('LoadUnitProduct', { description: 'The Product a LoadUnit carries, in part (spec part 2)' });

const dimensionValue = z.number().optional();

/** A LoadUnit's fields as `loadUnitView` writes them, absent optional fields left out. */
const loadUnitFields = {
  pKey: z.string(),
  transportUnitBK: z.string(),
  physicalPosition: z.string(),
  label: z.string().optional(),
  type: z.string(),
  locked: z.boolean().openapi({ description: 'true: locked for allocation' }),
  product: loadUnitProductSchema.optional(),
  dimension: z.object({ height: dimensionValue, width: dimensionValue, length: dimensionValue }).strict().optional(),
  ol: z.number().int(),
  createDt: z.iso.datetime(),
};

/** The plain JSON form of a LoadUnit, as in the list of a TransportUnit's LoadUnits (D7). */
export const loadUnitSchema = z.object(loadUnitFields).strict().openapi('LoadUnit');

/** The single LoadUnit resource (HAL), as `loadUnitResource` writes it. */
export const loadUnitResourceSchema = z
  .object({
    ...loadUnitFields,
    _links: z
      .object({
        self: linkSchema,
        'packaging-units': linkSchema,
        product: linkSchema.optional().openapi({ description: 'When a Product is assigned' }),
      })
      .strict(),
  })
  .strict()
  .openapi('LoadUnitResource');

/** The partial Product of spec part 2 ("Product (may be partial)"). */
export function embeddedProductView(product: LoadUnitProduct): Json {
  const view: Json = { pKey: product.pKey, sku: product.sku };
  put(view, 'label', product.label);
  view.baseUnit = Quantity.of(product.baseUnitMagnitude, product.baseUnitCode);
  put(view, 'description', product.description);
  put(view, 'availabilityState', product.availabilityState);
  return view;
}

/**
 * A LoadUnit's fields in the spec's order (part 2), absent values left out, no `_links`. Usable wherever another
 * resource embeds a (partial) LoadUnit, e.g. PackagingUnit.loadUnit; `product` is embedded only when given.
 */
export function loadUnitView(row: LoadUnitRow, product?: LoadUnitProduct): Json {
  const view: Json = {
    pKey: row.pKey,
    transportUnitBK: row.transportUnitBK,
    physicalPosition: row.physicalPosition,
  };
  put(view, 'label', row.label);
  view.type = row.type;
  view.locked = row.locked;
  if (product) view.product = embeddedProductView(product);
  put(view, 'dimension', row.dimension);
  view.ol = row.ol;
  view.createDt = row.createDt.toISOString();
  return view;
}

/** The single LoadUnit resource (D7): HAL with `self`, `packaging-units` and, when one is embedded, `product`. */
export function loadUnitResource(row: LoadUnitRow, product: LoadUnitProduct | undefined, hrefOf: HrefOf): Json {
  const links: Record<string, Link> = {
    self: { href: hrefOf(loadUnitPath(row.pKey)) },
    'packaging-units': { href: hrefOf(packagingUnitsInLoadUnitPath(row.pKey)) },
  };
  if (product) links.product = { href: hrefOf(`/v1/products/${product.pKey}`) };
  return { ...loadUnitView(row, product), _links: links };
}

/** The LoadUnit's entity tag (D33) is of its row and of the Product it embeds. */
export function loadUnitVersion(row: LoadUnitRow, product: LoadUnitProduct | undefined): Version {
  return [row.pKey, row.ol, product?.ol];
}
