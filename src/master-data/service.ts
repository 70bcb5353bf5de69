import { copySpool } from '../db/copy.js';
import type { Queryable, Tx } from '../db/tx.js';
import { validationError, type ApiError } from '../http/api-error.js';
import { MAX_BULK_PROBLEMS, type StagedBulk } from '../http/json-bulk.js';
import * as groupSql from './location-group-sql.js';
import type { LocationGroupRow } from './location-group-sql.js';
import * as locationSql from './location-sql.js';
import type { LocationRow } from './location-sql.js';
import * as locationStage from './location-stage-sql.js';
import * as groupStage from './location-group-stage-sql.js';
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
import type { TransportUnitCreate } from './schemas.js';
import * as tuSql from './transport-unit-sql.js';
import type { TransportUnitRow } from './transport-unit-sql.js';

export type { LocationGroupRow, LocationRow, TransportUnitRow };

/** A Location as a request names it (D14): by locationId or by erpCode. */
export interface LocationReference {
  readonly locationId?: string | null;
  readonly erpCode?: string | null;
}

const isBlank = (value: string | null | undefined): boolean => value == null || value.trim() === '';

/** Copies the staged rows of a bulk body into its staging table, and gives the planner its statistics. */
async function copyStaged(
  tx: Tx,
  staged: StagedBulk,
  timeoutMs: number,
  stage: { create: (tx: Tx) => Promise<void>; copy: string; analyze: (tx: Tx) => Promise<void> },
): Promise<void> {
  await stage.create(tx);
  await copySpool(tx, stage.copy, staged.rows, timeoutMs);
  await stage.analyze(tx);
}

/** `[3].name: duplicate of [1].name` for every repeated key of a bulk request (nothing is written then). */
function rejectDuplicates(duplicates: readonly { line: number; first: number }[], field: string): void {
  if (duplicates.length === 0) return;
  throw validationError(
    duplicates.map(({ line, first }) => ({ path: `[${line}].${field}`, message: `duplicate of [${first}].${field}` })),
  );
}

/**
 * D14: creates or updates groups by name; parents are resolved by name among the request's groups (in any
 * order) and the stored ones. Refuses a change that would make a group its own ancestor. Issue 34 item 5: the
 * groups come staged as COPY rows and are checked and stored by set-based statements on their staging table, so
 * none of them is held in memory; a 400 names at most MAX_BULK_PROBLEMS problems, as the body's own check does.
 */
export async function upsertLocationGroups(tx: Tx, staged: StagedBulk, timeoutMs: number): Promise<void> {
  await copyStaged(tx, staged, timeoutMs, {
    create: groupStage.createLocationGroupStage,
    copy: groupStage.COPY_INTO_LOCATION_GROUP_STAGE,
    analyze: groupStage.analyzeLocationGroupStage,
  });
  rejectDuplicates(await groupStage.selectStagedDuplicateNames(tx, MAX_BULK_PROBLEMS), 'name');
  const ownParent = await groupStage.selectStagedOwnParents(tx, MAX_BULK_PROBLEMS);
  if (ownParent.length > 0) {
    throw validationError(
      ownParent.map((line) => ({ path: `[${line}].parent`, message: 'a group cannot be its own parent' })),
    );
  }

  await groupSql.lockLocationGroupsForWrite(tx);
  const unknown = await groupStage.selectFirstUnknownStagedParent(tx);
  if (unknown !== undefined) throw locationGroupNotFound(unknown);

  await groupStage.assignStagedLocationGroupIds(tx);
  await groupStage.insertNewStagedLocationGroups(tx);
  await groupStage.updateStoredStagedLocationGroups(tx);
  const cycles = await groupStage.selectStagedLocationGroupCycles(tx, MAX_BULK_PROBLEMS);
  if (cycles.length > 0) {
    throw validationError(
      cycles.map(({ line, cycle }) => ({ path: `[${line}].parent`, message: `makes a cycle ${cycle.join(' → ')}` })),
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

/**
 * D14: creates or updates Locations by locationId. Each Location is replaced as sent (PUT): optional fields
 * left out take their defaults. An ERP code must stay unique among all Locations after the request. Issue 34 item
 * 5: the Locations come staged as COPY rows, checked and stored by set-based statements on their staging table.
 */
export async function upsertLocations(tx: Tx, staged: StagedBulk, timeoutMs: number): Promise<void> {
  await copyStaged(tx, staged, timeoutMs, {
    create: locationStage.createLocationStage,
    copy: locationStage.COPY_INTO_LOCATION_STAGE,
    analyze: locationStage.analyzeLocationStage,
  });
  rejectDuplicates(await locationStage.selectStagedDuplicateLocationIds(tx, MAX_BULK_PROBLEMS), 'locationId');
  const repeated = await locationStage.selectFirstRepeatedStagedErpCode(tx);
  if (repeated !== undefined) throw erpCodeAlreadyUsed(repeated);
  const unknown = await locationStage.selectFirstUnknownStagedGroup(tx);
  if (unknown !== undefined) throw locationGroupNotFound(unknown);

  await locationStage.lockStagedErpCodes(tx);
  const used = await locationStage.selectFirstStagedErpCodeHeldByOthers(tx);
  if (used !== undefined) throw erpCodeAlreadyUsed(used);
  await locationStage.upsertStagedLocations(tx);
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
