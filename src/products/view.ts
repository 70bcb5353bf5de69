import type { Link } from '../http/links.js';
import { put, type Json } from '../http/view.js';
import { Quantity } from '../units/quantity.js';
import type { ProductRow, ProductUnitRow } from './sql.js';

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
  };
  return { ...productView(product), _links: links };
}
