import type { Request, Response } from 'express';
import type { Queryable } from '../db/tx.js';
import { hrefOf } from '../http/links.js';
import { isVendorType } from '../http/media-types.js';
import { sendJson } from '../http/respond.js';
import { findLocationsByIds } from '../master-data/service.js';
import type { PackagingUnitRow } from './sql.js';
import { packagingUnitResource, packagingUnitView, type PackagingUnitViewContext } from './view.js';

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

/** A PackagingUnit list: plain JSON, or the vendor type with `links` when that was asked for (D7). */
export async function sendUnitList(
  db: Queryable,
  req: Request,
  res: Response,
  status: number,
  units: readonly PackagingUnitRow[],
): Promise<void> {
  const context = await viewContext(db, req, units);
  sendJson(
    res,
    status,
    units.map((unit) => packagingUnitView(unit, context)),
  );
}

export async function sendUnit(db: Queryable, req: Request, res: Response, unit: PackagingUnitRow): Promise<void> {
  sendJson(res, 200, packagingUnitResource(unit, await viewContext(db, req, [unit])));
}
