import type { Queryable, Tx } from '../db/tx.js';
import { validationError, type ApiError } from '../http/api-error.js';
import * as groupSql from './location-group-sql.js';
import type { LocationGroupRow } from './location-group-sql.js';
import * as locationSql from './location-sql.js';
import type { LocationRow, LocationValues } from './location-sql.js';
import {
  erpCodeAlreadyUsed,
  erpCodeNotFound,
  locationGroupNotFound,
  locationIdNotFound,
  transportUnitAlreadyExists,
  transportUnitBkMissing,
  transportUnitLocationMissing,
  transportUnitNotFound,
  transportUnitTypeMissing,
} from './messages.js';
import type { LocationGroupUpsert, LocationUpsert, TransportUnitCreate } from './schemas.js';
import * as tuSql from './transport-unit-sql.js';
import type { TransportUnitRow } from './transport-unit-sql.js';

export type { LocationGroupRow, LocationRow, TransportUnitRow };

/** A Location as a request names it (D14): by locationId or by erpCode. */
export interface LocationReference {
  readonly locationId?: string | null;
  readonly erpCode?: string | null;
}

const isBlank = (value: string | null | undefined): boolean => value == null || value.trim() === '';

/** `[3].name: duplicate of [1].name` for every repeated key of a bulk request (nothing is written then). */
function rejectDuplicates(keys: readonly string[], field: string): void {
  const firstIndex = new Map<string, number>();
  const problems: { path: string; message: string }[] = [];
  keys.forEach((key, index) => {
    const first = firstIndex.get(key);
    if (first === undefined) firstIndex.set(key, index);
    else problems.push({ path: `[${index}].${field}`, message: `duplicate of [${first}].${field}` });
  });
  if (problems.length > 0) throw validationError(problems);
}

/**
 * D14: creates or updates groups by name; parents are resolved by name among the request's groups (in any
 * order) and the stored ones. Refuses a change that would make a group its own ancestor.
 */
export async function upsertLocationGroups(tx: Tx, groups: readonly LocationGroupUpsert[]): Promise<void> {
  const names = groups.map((group) => group.name);
  const parents = groups.map((group) => group.parent ?? null);
  rejectDuplicates(names, 'name');
  const ownParent = groups.flatMap((group, index) =>
    group.parent === group.name ? [{ path: `[${index}].parent`, message: 'a group cannot be its own parent' }] : [],
  );
  if (ownParent.length > 0) throw validationError(ownParent);

  await groupSql.lockLocationGroupsForWrite(tx);
  const inRequest = new Set(names);
  const outside = [...new Set(parents.filter((parent): parent is string => parent !== null && !inRequest.has(parent)))];
  if (outside.length > 0) {
    const stored = new Set(await groupSql.selectExistingLocationGroupNames(tx, outside));
    const unknown = outside.find((parent) => !stored.has(parent));
    if (unknown !== undefined) throw locationGroupNotFound(unknown);
  }

  const createdIds = await groupSql.insertMissingLocationGroups(tx, names);
  await groupSql.updateLocationGroupParents(tx, names, parents, createdIds);
  const cycles = await groupSql.selectLocationGroupCycles(tx, names);
  if (cycles.length > 0) {
    const indexOf = new Map(names.map((name, index) => [name, index]));
    const problems = cycles.map(({ name, cycle }) => ({ index: indexOf.get(name) ?? 0, cycle }));
    problems.sort((x, y) => x.index - y.index);
    throw validationError(
      problems.map(({ index, cycle }) => ({
        path: `[${index}].parent`,
        message: `makes a cycle ${cycle.join(' → ')}`,
      })),
    );
  }
}

export async function requireLocationGroup(db: Queryable, name: string): Promise<LocationGroupRow> {
  const group = await groupSql.selectLocationGroupByName(db, name);
  if (!group) throw locationGroupNotFound(name);
  return group;
}

/**
 * The ids of the named group(s) and all their descendants (D14: a group contains its child groups), for
 * lookups by group name. The first unknown name is `unknownGroup`: 404 owms.common.common.lg.notFoundByName unless
 * the caller names it otherwise.
 */
export async function locationGroupIdsWithChildren(
  db: Queryable,
  name: string | readonly string[],
  unknownGroup: (name: string) => ApiError = locationGroupNotFound,
): Promise<number[]> {
  const names = typeof name === 'string' ? [name] : [...name];
  const stored = new Set(await groupSql.selectExistingLocationGroupNames(db, names));
  const unknown = names.find((candidate) => !stored.has(candidate));
  if (unknown !== undefined) throw unknownGroup(unknown);
  return groupSql.selectLocationGroupTreeIds(db, names);
}

function locationValues(location: LocationUpsert): LocationValues {
  return {
    locationId: location.locationId,
    erpCode: location.erpCode ?? null,
    locationGroupName: location.locationGroupName ?? null,
    incomingActive: location.incomingActive ?? true,
    outgoingActive: location.outgoingActive ?? true,
    plcState: location.plcState ?? 0,
    description: location.description ?? null,
    noMaxTransportUnits: location.noMaxTransportUnits ?? null,
  };
}

function firstRepeated(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) return value;
    seen.add(value);
  }
  return undefined;
}

/**
 * D14: creates or updates Locations by locationId. Each Location is replaced as sent (PUT): optional fields
 * left out take their defaults. An ERP code must stay unique among all Locations after the request.
 */
export async function upsertLocations(tx: Tx, locations: readonly LocationUpsert[]): Promise<void> {
  const values = locations.map(locationValues);
  const locationIds = values.map((location) => location.locationId);
  rejectDuplicates(locationIds, 'locationId');

  const erpCodes = values.flatMap((location) => (location.erpCode === null ? [] : [location.erpCode]));
  const repeated = firstRepeated(erpCodes);
  if (repeated !== undefined) throw erpCodeAlreadyUsed(repeated);

  const groupNames = [...new Set(values.flatMap((location) => location.locationGroupName ?? []))];
  if (groupNames.length > 0) {
    const stored = new Set(await groupSql.selectExistingLocationGroupNames(tx, groupNames));
    const unknown = groupNames.find((name) => !stored.has(name));
    if (unknown !== undefined) throw locationGroupNotFound(unknown);
  }

  if (erpCodes.length > 0) {
    await locationSql.lockErpCodes(tx, erpCodes);
    const taken = new Set(await locationSql.selectErpCodesHeldByOthers(tx, erpCodes, locationIds));
    const used = erpCodes.find((code) => taken.has(code));
    if (used !== undefined) throw erpCodeAlreadyUsed(used);
  }
  await locationSql.upsertLocations(tx, values);
}

/**
 * The Location a request names (D14): by erpCode when given, else by locationId; 404 with the key of the
 * identifier used, naming the value as the request did. When both are given they must name the same Location.
 */
export async function requireLocation(db: Queryable, ref: LocationReference): Promise<LocationRow> {
  if (ref.erpCode != null) {
    const location = await locationSql.selectLocationByErpCode(db, ref.erpCode);
    if (!location) throw erpCodeNotFound(ref.erpCode);
    if (ref.locationId != null && ref.locationId !== location.locationId) {
      throw validationError([
        { path: 'locationId', message: `names another Location than erpCode ${ref.erpCode} (${location.locationId})` },
      ]);
    }
    return location;
  }
  if (ref.locationId != null) {
    const location = await locationSql.selectLocationByLocationId(db, ref.locationId);
    if (!location) throw locationIdNotFound(ref.locationId);
    return location;
  }
  throw validationError([{ path: 'locationId', message: 'required (or erpCode)' }]);
}

/** Locations by internal id, for embedding them in other resources' views without a query per row. */
export async function findLocationsByIds(db: Queryable, ids: readonly number[]): Promise<Map<number, LocationRow>> {
  const rows = ids.length === 0 ? [] : await locationSql.selectLocationsByIds(db, [...new Set(ids)]);
  return new Map(rows.map((row) => [row.id, row]));
}

export function findTransportUnit(db: Queryable, bk: string): Promise<TransportUnitRow | undefined> {
  return tuSql.selectTransportUnitByBk(db, bk);
}

export async function requireTransportUnit(db: Queryable, bk: string): Promise<TransportUnitRow> {
  const transportUnit = await tuSql.selectTransportUnitByBk(db, bk);
  if (!transportUnit) throw transportUnitNotFound(bk);
  return transportUnit;
}

/**
 * D15: a TransportUnit first named by a divide or a PackagingUnit create is registered on the spot, without
 * type or location. Safe against concurrent registrations of the same key: the insert waits for a competing
 * one and then yields to it; the read that follows (a new statement) sees the winner's row.
 */
export async function registerTransportUnit(tx: Tx, bk: string): Promise<{ id: number; bk: string }> {
  if (isBlank(bk)) throw transportUnitBkMissing();
  const row = (await tuSql.insertTransportUnitIfMissing(tx, bk)) ?? (await tuSql.selectTransportUnitByBk(tx, bk));
  if (!row) throw new Error(`TransportUnit ${bk} neither inserted nor found`);
  return { id: row.id, bk: row.bk };
}

/**
 * D15: creates a TransportUnit on a Location. Missing parts are reported with the spec's keys, in the spec's
 * order. One registered on the spot (no type yet) is completed; a complete one is a conflict.
 */
export async function createTransportUnit(tx: Tx, input: TransportUnitCreate): Promise<TransportUnitRow> {
  const { transportUnitBK: bk, transportUnitType: type, actualLocation: ref } = input;
  if (bk == null || isBlank(bk)) throw transportUnitBkMissing();
  if (type == null || isBlank(type)) throw transportUnitTypeMissing();
  const named = [ref?.erpCode, ref?.locationId].filter((value) => value != null);
  if (named.length === 0 || named.some(isBlank)) throw transportUnitLocationMissing();

  const location = await requireLocation(tx, ref ?? {});
  const transportUnit = await tuSql.insertOrCompleteTransportUnit(tx, bk, type, location.id);
  if (!transportUnit) throw transportUnitAlreadyExists(bk);
  return transportUnit;
}

export interface TransportUnitWithLocation {
  readonly transportUnit: TransportUnitRow;
  readonly location: LocationRow | undefined;
}

export async function getTransportUnit(db: Queryable, bk: string): Promise<TransportUnitWithLocation> {
  const transportUnit = await requireTransportUnit(db, bk);
  const locationId = transportUnit.actualLocationId;
  const location = locationId === null ? undefined : (await locationSql.selectLocationsByIds(db, [locationId]))[0];
  return { transportUnit, location };
}

/** D15: moves a TransportUnit to the Location with that ERP code. */
export async function moveTransportUnit(tx: Tx, bk: string, erpCode: string): Promise<void> {
  const transportUnit = await requireTransportUnit(tx, bk);
  const location = await requireLocation(tx, { erpCode });
  await tuSql.updateTransportUnitLocation(tx, transportUnit.id, location.id);
}
