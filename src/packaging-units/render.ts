import type { Request, Response } from 'express';
import type { ZodType } from 'zod';
import type { Queryable } from '../db/tx.js';
import { LIST_WITH_HAL } from '../http/hal-list.js';
import { arrayReader, halJsonList, plainJsonList, type JsonList } from '../http/json-list.js';
import { href, hrefOf } from '../http/links.js';
import { HAL_JSON, isVendorType, PACKAGING_UNIT_VENDOR_TYPES, SINGLE_RESOURCE } from '../http/media-types.js';
import { requireMatch, sendTagged, type Version } from '../http/validators.js';
import { z } from '../openapi/zod.js';
import type { HeaderDoc, ResponseDoc } from '../openapi/responses.js';
import { findLocationsByIds } from '../master-data/service.js';
import type { LocationRow } from '../master-data/location-sql.js';
import type { PackagingUnitRow } from './sql.js';
import {
  PACKAGING_UNITS_REL,
  packagingUnitHalListSchema,
  packagingUnitResource,
  packagingUnitSchema,
  packagingUnitView,
  packagingUnitWithLinksSchema,
  type PackagingUnitViewContext,
} from './view.js';

/** A list reached by a HAL link also answers HAL when that is named (issue 13); the default stays plain JSON. */
export const UNIT_LIST_WITH_HAL = [...LIST_WITH_HAL, ...PACKAGING_UNIT_VENDOR_TYPES] as const;

function unitListBody(mediaType: string): ZodType {
  if (mediaType === HAL_JSON) return packagingUnitHalListSchema;
  return z.array(isVendorType(mediaType) ? packagingUnitWithLinksSchema : packagingUnitSchema);
}

/** The response of a `unitList` in each media type the route produces. */
export function unitListResponse(
  description: string,
  produces: readonly string[],
  headers?: Readonly<Record<string, HeaderDoc>>,
): ResponseDoc {
  return {
    description,
    content: Object.fromEntries(produces.map((type) => [type, unitListBody(type)])),
    ...(headers && { headers }),
  };
}

async function viewContext(
  db: Queryable,
  req: Request,
  units: readonly PackagingUnitRow[],
): Promise<PackagingUnitViewContext> {
  const locationIds = units.flatMap((unit) => (unit.locationId === null ? [] : [unit.locationId]));
  return {
    locations: await findLocationsByIds(db, locationIds),
    href: hrefOf(req),
    withLinks: isVendorType(req.mediaType),
  };
}

/**
 * A PackagingUnit list: plain JSON, the vendor type with `links` (D7), or HAL with each unit as a resource
 * where the route offers it (issue 13), with HAL's `_links.next` of a paged list (D39; its `Link` header is the
 * route's). Read on `db`, sent by `sendJsonList` once the connection is back.
 */
export async function unitList(
  db: Queryable,
  req: Request,
  units: readonly PackagingUnitRow[],
  nextHref?: string,
): Promise<JsonList<PackagingUnitRow>> {
  const context = await viewContext(db, req, units);
  if (req.mediaType === HAL_JSON) {
    const resource = (unit: PackagingUnitRow): unknown => packagingUnitResource(unit, context);
    return halJsonList(href(req, req.originalUrl), PACKAGING_UNITS_REL, arrayReader(units), resource, nextHref);
  }
  return plainJsonList(arrayReader(units), (unit) => packagingUnitView(unit, context));
}

/**
 * The unit's entity tag (D33) is of its row and of the Product, LoadUnit and Location it shows, and of what
 * reservations past their expiry hold on it (D40): the representation changes when one falls due, its row only
 * when the expiry work ends it.
 */
function unitVersion(unit: PackagingUnitRow, location: LocationRow | undefined): Version {
  const version = [unit.pKey, unit.ol, unit.productOl, unit.loadUnitOl, location?.ol];
  return Number(unit.dueBase) === 0 ? version : [...version, `due${unit.dueBase}`];
}

export async function sendUnit(
  db: Queryable,
  req: Request,
  res: Response,
  unit: PackagingUnitRow,
  status = 200,
): Promise<void> {
  const context = await viewContext(db, req, [unit]);
  const location = unit.locationId === null ? undefined : context.locations.get(unit.locationId);
  sendTagged(res, unitVersion(unit, location), packagingUnitResource(unit, context), status);
}

/** D33's If-Match on a unit, checked against the unit as locked in the write's transaction. */
export async function requireUnitMatch(db: Queryable, req: Request, unit: PackagingUnitRow): Promise<void> {
  if (req.headers['if-match'] === undefined) return;
  const locations = unit.locationId === null ? undefined : await findLocationsByIds(db, [unit.locationId]);
  requireMatch(req, SINGLE_RESOURCE, unitVersion(unit, locations?.get(unit.locationId!)));
}
