import { halListSchema } from '../http/hal-list.js';
import { linkSchema, type Link } from '../http/links.js';
import { put, type Json } from '../http/view.js';
import { locationSchema, locationView, type LocationView } from '../master-data/view.js';
import { z } from '../openapi/zod.js';
import { Quantity } from '../units/quantity.js';
import type { PackagingUnitRow } from './sql.js';
import { asShown, availableOf, quantityOf } from './stock.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';

export interface PackagingUnitViewContext {
  /** Embedded Locations by internal id (only units lying on a Location need one). */
  readonly locations: ReadonlyMap<number, Parameters<typeof locationView>[0]>;
  /** Absolute hrefs; links are written only in the vendor representation (spec part 1 rule 5). */
  readonly href: (path: string) => string;
  readonly withLinks: boolean;
}

/** The rel of the units in a PackagingUnit list as HAL: the rel of the links that lead to such lists. */
export const PACKAGING_UNITS_REL = 'packaging-units';

const VENDOR_RELS = ['loadUnit', 'transportUnit', 'product'] as const;

/** The Product as a PackagingUnit embeds it (spec part 2: "may be partial"). */
const unitProductSchema = z
  .object({ pKey: z.string(), sku: z.string(), label: z.string().optional(), baseUnit: quantityResponseSchema })
  .strict()
  .openapi('PackagingUnitProduct', { description: 'The Product of a PackagingUnit, in part' });

/** The LoadUnit as a PackagingUnit embeds it. */
const unitLoadUnitSchema = z
  .object({
    pKey: z.string(),
    transportUnitBK: z.string(),
    physicalPosition: z.string(),
    type: z.string(),
    locked: z.boolean(),
  })
  .strict()
  .openapi('PackagingUnitLoadUnit', { description: 'The LoadUnit holding a PackagingUnit, in part' });

/** Stored as the create request gave them (D18), so nulls the client sent come back. */
const dimensionValue = z.number().nullable().optional();

/** A PackagingUnit's fields as `packagingUnitView` writes them, without any links. */
const unitFields = {
  pKey: z.string(),
  product: unitProductSchema,
  quantity: quantityResponseSchema,
  qtyAvailable: quantityResponseSchema,
  state: z.enum(['AVAILABLE', 'LOCKED', 'QC_LOCKED']),
  message: z
    .object({ messageNo: z.string().optional(), messageText: z.string().optional() })
    .strict()
    .optional()
    .openapi({ description: 'The problem reported on a LOCKED unit (D20)' }),
  loadUnit: unitLoadUnitSchema.optional().openapi({ description: 'Set when the unit is in a LoadUnit' }),
  actualLocation: locationSchema.optional().openapi({ description: 'Set when the unit lies directly on a Location' }),
  dimension: z
    .object({
      height: dimensionValue,
      length: dimensionValue,
      width: dimensionValue,
      uom: z.string().nullable().optional(),
    })
    .strict()
    .optional(),
  weight: quantityResponseSchema.optional(),
  distribution: z
    .object({
      piecesPerLayer: z.number().int().optional(),
      numberOfLayers: z.number().int().optional(),
      carrierType: z.string().optional(),
    })
    .strict()
    .optional(),
  physicalPosition: z.string().optional(),
  serialNumber: z.string().optional(),
  expiresAt: z.iso.datetime().optional(),
  labels: z.array(z.string()).optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  ol: z.number().int(),
  createDt: z.iso.datetime(),
};

/** The plain JSON form of a PackagingUnit in lists (D7). */
export const packagingUnitSchema = z.object(unitFields).strict().openapi('PackagingUnit');

/** The vendor form (D1, spec part 1 rule 5): the plain form with a `links` array. */
export const packagingUnitWithLinksSchema = z
  .object({
    ...unitFields,
    links: z.array(z.object({ rel: z.enum(VENDOR_RELS), href: z.string() }).strict()),
  })
  .strict()
  .openapi('PackagingUnitWithLinks', {
    description: 'A PackagingUnit in the vendor type, with links to what it is in',
  });

/** The single PackagingUnit resource (HAL), as `packagingUnitResource` writes it. */
export const packagingUnitResourceSchema = z
  .object({
    ...unitFields,
    _links: z
      .object({
        self: linkSchema,
        loadUnit: linkSchema.optional(),
        transportUnit: linkSchema.optional(),
        product: linkSchema,
      })
      .strict(),
  })
  .strict()
  .openapi('PackagingUnitResource');

/** A PackagingUnit list as HAL: the units as resources under `_embedded['packaging-units']`. */
export const packagingUnitHalListSchema = halListSchema(PACKAGING_UNITS_REL, packagingUnitResourceSchema).openapi(
  'PackagingUnitHalList',
);

function linksOf(
  unit: PackagingUnitRow,
  href: (path: string) => string,
): { rel: (typeof VENDOR_RELS)[number]; href: string }[] {
  const links: { rel: (typeof VENDOR_RELS)[number]; href: string }[] = [];
  if (unit.loadUnitPKey) links.push({ rel: 'loadUnit', href: href(`/v1/load-units/${unit.loadUnitPKey}`) });
  if (unit.transportUnitBK) {
    links.push({
      rel: 'transportUnit',
      href: href(`/v1/transport-units?bk=${encodeURIComponent(unit.transportUnitBK)}`),
    });
  }
  links.push({ rel: 'product', href: href(`/v1/products/${unit.productPKey}`) });
  return links;
}

/** A PackagingUnit with the spec's fields in the spec's order; product and loadUnit embedded in part. */
export function packagingUnitView(unit: PackagingUnitRow, context: PackagingUnitViewContext): Json {
  const view: Json = { pKey: unit.pKey };
  const product: Json = { pKey: unit.productPKey, sku: unit.sku };
  put(product, 'label', unit.productLabel);
  product.baseUnit = Quantity.of(unit.productBaseMagnitude, unit.productBaseCode);
  view.product = product;
  view.quantity = quantityOf(unit);
  view.qtyAvailable = availableOf(asShown(unit));
  view.state = unit.state;
  if (unit.messageNo !== null || unit.messageText !== null) {
    const message: Json = {};
    put(message, 'messageNo', unit.messageNo);
    put(message, 'messageText', unit.messageText);
    view.message = message;
  }
  if (unit.loadUnitPKey) {
    view.loadUnit = {
      pKey: unit.loadUnitPKey,
      transportUnitBK: unit.transportUnitBK,
      physicalPosition: unit.loadUnitPosition,
      type: unit.loadUnitType,
      locked: unit.loadUnitLocked,
    };
  }
  const location = unit.locationId !== null ? context.locations.get(unit.locationId) : undefined;
  if (location) view.actualLocation = locationView(location) satisfies LocationView;
  put(view, 'dimension', unit.dimension);
  if (unit.weightMagnitude !== null && unit.weightCode !== null) {
    view.weight = Quantity.of(unit.weightMagnitude, unit.weightCode);
  }
  put(view, 'distribution', unit.distribution);
  put(view, 'physicalPosition', unit.physicalPosition);
  put(view, 'serialNumber', unit.serialNumber);
  put(view, 'expiresAt', unit.expiresAt?.toISOString());
  put(view, 'labels', unit.labels);
  put(view, 'details', unit.details);
  if (context.withLinks) view.links = linksOf(unit, context.href);
  view.ol = unit.ol;
  view.createDt = unit.createDt.toISOString();
  return view;
}

export function packagingUnitResource(unit: PackagingUnitRow, context: PackagingUnitViewContext): Json {
  const links: Record<string, Link> = { self: { href: context.href(`/v1/packaging-units/${unit.pKey}`) } };
  for (const link of linksOf(unit, context.href)) links[link.rel] = { href: link.href };
  // Added to the view rather than to a copy of it: the same keys in the same order (issue 38 item 4).
  const resource = packagingUnitView(unit, context.withLinks ? { ...context, withLinks: false } : context);
  resource._links = links;
  return resource;
}
