import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
import type { LocationRow } from '../master-data/location-sql.js';
import { findLocationsByIds } from '../master-data/service.js';
import { selectUnitsByIds, type PackagingUnitRow } from './sql.js';
import { packagingUnitView } from './view.js';

export type UnitEventType = 'pu.event.created' | 'pu.event.moved' | 'pu.event.changed';

/** A unit an operation created, moved or changed (by internal id), or deleted (as it was before). */
export type UnitChange =
  | { readonly type: UnitEventType; readonly id: number }
  | { readonly type: 'pu.event.deleted'; readonly before: PackagingUnitRow };

// Plain JSON carries no links, so no href is ever built.
const noHref = (path: string): string => path;

/**
 * D27: the events of the units in the order given, each the unit as GET renders it in plain JSON, read back in
 * the changing transaction in one statement; a deleted unit is rendered as it was before its deletion.
 */
export async function unitEvents(db: Queryable, changes: readonly UnitChange[]): Promise<NewEvent[]> {
  return (await unitEventsAndRows(db, changes)).events;
}

/**
 * unitEvents, with the units it rendered (those not deleted) by id, for a caller that needs one of them too. Units
 * in `answered` (as the statement that changed them last answered them) and Locations in `known` are not read.
 */
export async function unitEventsAndRows(
  db: Queryable,
  changes: readonly UnitChange[],
  known: ReadonlyMap<number, LocationRow> = new Map(),
  answered: ReadonlyMap<number, PackagingUnitRow> = new Map(),
): Promise<{ events: NewEvent[]; units: ReadonlyMap<number, PackagingUnitRow> }> {
  if (changes.length === 0) return { events: [], units: new Map() };
  const ids = changes.flatMap((change) => ('id' in change && !answered.has(change.id) ? [change.id] : []));
  const read = ids.length === 0 ? [] : await selectUnitsByIds(db, ids);
  const current = new Map([...answered, ...read.map((unit): [number, PackagingUnitRow] => [unit.id, unit])]);
  const events = await renderedUnitEvents(
    db,
    changes.map((change) => {
      const unit = 'id' in change ? current.get(change.id) : change.before;
      if (!unit) throw new Error(`PackagingUnit ${'id' in change ? change.id : ''} not found right after it changed`);
      return { type: change.type, unit };
    }),
    known,
  );
  return { events, units: current };
}

/**
 * The events of units the caller has just read after their change (or before their deletion); the Locations they
 * lie on are read unless `known` has them already.
 */
export async function renderedUnitEvents(
  db: Queryable,
  changed: readonly { type: UnitChange['type']; unit: PackagingUnitRow }[],
  known: ReadonlyMap<number, LocationRow> = new Map(),
): Promise<NewEvent[]> {
  const missing = changed.flatMap(({ unit }) =>
    unit.locationId === null || known.has(unit.locationId) ? [] : [unit.locationId],
  );
  const locations = new Map([...known, ...(await findLocationsByIds(db, missing))]);
  const context = { locations, href: noHref, withLinks: false };
  // An event shows what its transaction committed: a reservation past its expiry holds its goods until the
  // transaction that ends it commits (with events of its own), so a replay of the feed equals the ledger (D40).
  return changed.map(({ type, unit }) => ({
    type,
    key: unit.pKey,
    resource: packagingUnitView({ ...unit, dueBase: '0' }, context),
  }));
}
