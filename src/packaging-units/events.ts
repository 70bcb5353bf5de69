import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
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
  if (changes.length === 0) return [];
  const ids = changes.flatMap((change) => ('id' in change ? [change.id] : []));
  const current = new Map((ids.length === 0 ? [] : await selectUnitsByIds(db, ids)).map((unit) => [unit.id, unit]));
  return renderedUnitEvents(
    db,
    changes.map((change) => {
      const unit = 'id' in change ? current.get(change.id) : change.before;
      if (!unit) throw new Error(`PackagingUnit ${'id' in change ? change.id : ''} not found right after it changed`);
      return { type: change.type, unit };
    }),
  );
}

/** The events of units the caller has just read after their change (or before their deletion). */
export async function renderedUnitEvents(
  db: Queryable,
  changed: readonly { type: UnitChange['type']; unit: PackagingUnitRow }[],
): Promise<NewEvent[]> {
  const locationIds = changed.flatMap(({ unit }) => (unit.locationId === null ? [] : [unit.locationId]));
  const context = { locations: await findLocationsByIds(db, locationIds), href: noHref, withLinks: false };
  // An event shows what its transaction committed: a reservation past its expiry holds its goods until the
  // transaction that ends it commits (with events of its own), so a replay of the feed equals the ledger (D40).
  return changed.map(({ type, unit }) => ({
    type,
    key: unit.pKey,
    resource: packagingUnitView({ ...unit, dueBase: '0' }, context),
  }));
}
