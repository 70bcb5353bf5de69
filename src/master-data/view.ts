import { linkSchema } from '../http/links.js';
import { z } from '../openapi/zod.js';
import type { LocationGroupRow } from './location-group-sql.js';
import type { LocationRow } from './location-sql.js';
import type { TransportUnitRow } from './transport-unit-sql.js';

/** Turns a path into an absolute href (the routes pass `path => href(req, path)`). */
export type HrefOf = (path: string) => string;

export const locationPath = (locationId: string): string =>
  `/v1/locations?locationId=${encodeURIComponent(locationId)}`;
export const locationGroupPath = (name: string): string => `/v1/location-groups?name=${encodeURIComponent(name)}`;
export const transportUnitPath = (bk: string): string => `/v1/transport-units?bk=${encodeURIComponent(bk)}`;

const createDtSchema = z.iso.datetime().openapi({ description: 'When the record was created (UTC)' });

/** A Location's fields as `locationView` writes them, absent optional fields left out. */
const locationFields = {
  pKey: z.string(),
  locationId: z.string(),
  erpCode: z.string().optional(),
  locationGroupName: z.string().optional(),
  incomingActive: z.boolean(),
  outgoingActive: z.boolean(),
  plcState: z.number().int(),
  description: z.string().optional(),
  noMaxTransportUnits: z.number().int().optional(),
  ol: z.number().int(),
  createDt: createDtSchema,
};

/** A Location where other resources embed one (TransportUnit, PackagingUnit). */
export const locationSchema = z.object(locationFields).strict().openapi('Location');
export type LocationView = z.infer<typeof locationSchema>;

/** The single Location resource (HAL), as `locationResource` writes it. */
export const locationResourceSchema = z
  .object({ ...locationFields, _links: z.object({ self: linkSchema }).strict() })
  .strict()
  .openapi('LocationResource');

export const locationGroupResourceSchema = z
  .object({
    pKey: z.string(),
    name: z.string(),
    parent: z.string().optional().openapi({ description: 'Name of the parent LocationGroup' }),
    ol: z.number().int(),
    createDt: createDtSchema,
    _links: z.object({ self: linkSchema, parent: linkSchema.optional() }).strict(),
  })
  .strict()
  .openapi('LocationGroup');

export const transportUnitResourceSchema = z
  .object({
    transportUnitBK: z.string(),
    transportUnitType: z.string().optional().openapi({ description: 'Absent on a unit registered on the spot' }),
    actualLocation: locationSchema.optional(),
    ol: z.number().int(),
    createDt: createDtSchema,
    _links: z.object({ self: linkSchema, actualLocation: linkSchema.optional() }).strict(),
  })
  .strict()
  .openapi('TransportUnit');

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
export function locationResource(row: LocationRow, hrefOf: HrefOf): z.infer<typeof locationResourceSchema> {
  return { ...locationView(row), _links: { self: { href: hrefOf(locationPath(row.locationId)) } } };
}

export function locationGroupResource(
  row: LocationGroupRow,
  hrefOf: HrefOf,
): z.infer<typeof locationGroupResourceSchema> {
  return {
    pKey: row.pKey,
    name: row.name,
    ...(row.parentName !== null && { parent: row.parentName }),
    ol: row.ol,
    createDt: row.createDt.toISOString(),
    _links: {
      self: { href: hrefOf(locationGroupPath(row.name)) },
      ...(row.parentName !== null && { parent: { href: hrefOf(locationGroupPath(row.parentName)) } }),
    },
  };
}

/** D15: the TransportUnit with its Location embedded; a unit registered on the spot has neither type nor place. */
export function transportUnitResource(
  transportUnit: TransportUnitRow,
  location: LocationRow | undefined,
  hrefOf: HrefOf,
): z.infer<typeof transportUnitResourceSchema> {
  return {
    transportUnitBK: transportUnit.bk,
    ...(transportUnit.transportUnitType !== null && { transportUnitType: transportUnit.transportUnitType }),
    ...(location && { actualLocation: locationView(location) }),
    ol: transportUnit.ol,
    createDt: transportUnit.createDt.toISOString(),
    _links: {
      self: { href: hrefOf(transportUnitPath(transportUnit.bk)) },
      ...(location && { actualLocation: { href: hrefOf(locationPath(location.locationId)) } }),
    },
  };
}
