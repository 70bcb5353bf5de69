import type { Queryable } from '../db/tx.js';
import type { NewEvent } from '../events/outbox.js';
import {
  loadUnitEvents,
  type AnsweredLoadUnit,
  type LoadUnitChange,
  type LoadUnitEventType,
} from '../load-units/events.js';
import { unitEventsAndRows, type UnitChange, type UnitEventType } from './events.js';
import type { LocationRow } from '../master-data/location-sql.js';
import type { PackagingUnitRow } from './sql.js';

// D27 is one event per changed resource: a resource changed twice in one operation keeps the weightier type.
const LOAD_UNIT_WEIGHT: Record<LoadUnitEventType, number> = { 'lu.event.changed': 1, 'lu.event.created': 2 };
const UNIT_WEIGHT: Record<UnitChange['type'], number> = {
  'pu.event.changed': 1,
  'pu.event.moved': 2,
  'pu.event.created': 3,
  'pu.event.deleted': 4,
};

/**
 * The LoadUnits and PackagingUnits one operation changed, gathered while it runs so that their events are
 * rendered from one re-read per kind at its end and appended in one call. A resource keeps the place of its
 * first change; LoadUnits come first, as a LoadUnit is created before units are put into it.
 */
export class StockChanges {
  private readonly loadUnits = new Map<number, LoadUnitChange>();
  private readonly units = new Map<number, UnitChange>();
  /** Units as the statement that changed them answered them, not read again while no later change is noted. */
  private readonly current = new Map<number, PackagingUnitRow>();
  /** LoadUnits as the statement that changed them answered them, likewise. */
  private readonly currentLoadUnits = new Map<number, AnsweredLoadUnit>();

  /** A changed LoadUnit; `now`: it as the changing statement answered it (its event then reads nothing). */
  loadUnit(type: LoadUnitEventType, id: number, now?: AnsweredLoadUnit): this {
    if (now) this.currentLoadUnits.set(id, now);
    else this.currentLoadUnits.delete(id);
    const known = this.loadUnits.get(id);
    if (!known || LOAD_UNIT_WEIGHT[type] > LOAD_UNIT_WEIGHT[known.type]) this.loadUnits.set(id, { type, id });
    return this;
  }

  /** A changed unit; `now`: the unit as the changing statement answered it (its event then reads nothing). */
  unit(type: UnitEventType, id: number, now?: PackagingUnitRow): this {
    if (now) this.current.set(id, now);
    else this.current.delete(id);
    return this.noteUnit(id, { type, id });
  }

  deletedUnit(before: PackagingUnitRow): this {
    this.current.delete(before.id);
    return this.noteUnit(before.id, { type: 'pu.event.deleted', before });
  }

  async events(db: Queryable): Promise<NewEvent[]> {
    return (await this.eventsAndUnits(db)).events;
  }

  /**
   * The events, and the changed units (but deleted ones) as their events render them, by id; Locations in `known`
   * are not read again.
   */
  async eventsAndUnits(
    db: Queryable,
    known?: ReadonlyMap<number, LocationRow>,
  ): Promise<{ events: NewEvent[]; units: ReadonlyMap<number, PackagingUnitRow> }> {
    const loadUnitChanges = await loadUnitEvents(db, [...this.loadUnits.values()], this.currentLoadUnits);
    const { events, units } = await unitEventsAndRows(db, [...this.units.values()], known, this.current);
    return { events: [...loadUnitChanges, ...events], units };
  }

  private noteUnit(id: number, change: UnitChange): this {
    const known = this.units.get(id);
    if (!known || UNIT_WEIGHT[change.type] > UNIT_WEIGHT[known.type]) this.units.set(id, change);
    return this;
  }
}
