import type { LocationGroupRow } from './location-group-sql.js';
import type { LocationRow } from './location-sql.js';
import type { TransportUnitRow } from './transport-unit-sql.js';

/** Turns a path into an absolute href (the routes pass `path => href(req, path)`). */
export type HrefOf = (path: string) => string;

export const locationPath = (locationId: string): string =>
  `/v1/locations?locationId=${encodeURIComponent(locationId)}`;
export const locationGroupPath = (name: string): string => `/v1/location-groups?name=${encodeURIComponent(name)}`;
export const transportUnitPath = (bk: string): string => `/v1/transport-units?bk=${encodeURIComponent(bk)}`;

export interface LocationView {
  pKey: string;
  locationId: string;
  erpCode?: string;
  locationGroupName?: string;
  incomingActive: boolean;
  outgoingActive: boolean;
  plcState: number;
  description?: string;
  noMaxTransportUnits?: number;
  ol: number;
  createDt: string;
}

/**
 * A Location's fields in the spec's order (part 2), absent values left out. Usable on its own where another
 * resource embeds a Location (PackagingUnit.actualLocation).
 */
export function locationView(row: LocationRow): LocationView {
  return {
    pKey: row.pKey,
    locationId: row.locationId,
    ...(row.erpCode !== null && { erpCode: row.erpCode }),
    ...(row.locationGroupName !== null && { locationGroupName: row.locationGroupName }),
    incomingActive: row.incomingActive,
    outgoingActive: row.outgoingActive,
    plcState: row.plcState,
    ...(row.description !== null && { description: row.description }),
    ...(row.noMaxTransportUnits !== null && { noMaxTransportUnits: row.noMaxTransportUnits }),
    ol: row.ol,
    createDt: row.createDt.toISOString(),
  };
}

/** The single Location resource (D7): HAL with `_links.self`. */
export function locationResource(row: LocationRow, hrefOf: HrefOf): object {
  return { ...locationView(row), _links: { self: { href: hrefOf(locationPath(row.locationId)) } } };
}

export function locationGroupResource(row: LocationGroupRow, hrefOf: HrefOf): object {
  const links: Record<string, { href: string }> = { self: { href: hrefOf(locationGroupPath(row.name)) } };
  if (row.parentName !== null) links.parent = { href: hrefOf(locationGroupPath(row.parentName)) };
  return {
    pKey: row.pKey,
    name: row.name,
    ...(row.parentName !== null && { parent: row.parentName }),
    ol: row.ol,
    createDt: row.createDt.toISOString(),
    _links: links,
  };
}

/** D15: the TransportUnit with its Location embedded; a unit registered on the spot has neither type nor place. */
export function transportUnitResource(
  transportUnit: TransportUnitRow,
  location: LocationRow | undefined,
  hrefOf: HrefOf,
): object {
  const links: Record<string, { href: string }> = { self: { href: hrefOf(transportUnitPath(transportUnit.bk)) } };
  if (location) links.actualLocation = { href: hrefOf(locationPath(location.locationId)) };
  return {
    transportUnitBK: transportUnit.bk,
    ...(transportUnit.transportUnitType !== null && { transportUnitType: transportUnit.transportUnitType }),
    ...(location && { actualLocation: locationView(location) }),
    ol: transportUnit.ol,
    createDt: transportUnit.createDt.toISOString(),
    _links: links,
  };
}
