import type { Link } from '../http/links.js';
import { put, type Json } from '../http/view.js';
import { locationView, type LocationView } from '../master-data/view.js';
import { Quantity } from '../units/quantity.js';
import type { PackagingUnitRow } from './sql.js';
import { availableOf, quantityOf } from './stock.js';

export interface PackagingUnitViewContext {
  /** Embedded Locations by internal id (only units lying on a Location need one). */
  readonly locations: ReadonlyMap<number, Parameters<typeof locationView>[0]>;
  /** Absolute hrefs; links are written only in the vendor representation (spec part 1 rule 5). */
  readonly href: (path: string) => string;
  readonly withLinks: boolean;
}

function linksOf(unit: PackagingUnitRow, href: (path: string) => string): { rel: string; href: string }[] {
  const links = [];
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
  view.qtyAvailable = availableOf(unit);
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
  return { ...packagingUnitView(unit, { ...context, withLinks: false }), _links: links };
}
