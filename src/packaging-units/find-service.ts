import { asUuid } from '../db/keys.js';
import type { Queryable } from '../db/tx.js';
import { validationError } from '../http/api-error.js';
import { hasMovements, selectMovements, type MovementRow } from '../ledger/sql.js';
import { pageOf, type Page, type PageQuery } from '../http/pagination.js';
import { findLoadUnitByPKey } from '../load-units/service.js';
import { findLocationsByIds, locationGroupIdsWithChildren, requireLocation } from '../master-data/service.js';
import { requireProductReference, requireProductReferenceByPKey } from '../products/service.js';
import { packagingUnitErrors } from './messages.js';
import type { PackagingUnitSearch } from './schemas.js';
import {
  selectReservableUnitsOfProduct,
  selectReservableUnitsOfProductInGroups,
  selectUnitByPKey,
  selectUnitsAtLoadUnitPosition,
  selectUnitsInLoadUnit,
  selectUnitsOnLocation,
  selectUnitsOnTransportUnit,
  type ListedUnitRow,
  type PackagingUnitRow,
  type Sort,
  type UnitPageQuery,
} from './sql.js';
import { unitCursorText } from './unit-cursor.js';

/** The page size of a unit search without `amount`. */
export const DEFAULT_AMOUNT = 1000;

export async function findUnitByPKey(db: Queryable, pKey: string): Promise<PackagingUnitRow> {
  const key = asUuid(pKey);
  const unit = key ? await selectUnitByPKey(db, key) : undefined;
  if (!unit) throw packagingUnitErrors.notFoundByPKey(pKey);
  return unit;
}

export async function findUnitsInLoadUnit(db: Queryable, loadUnitPKey: string): Promise<PackagingUnitRow[]> {
  const loadUnit = await findLoadUnitByPKey(db, loadUnitPKey);
  return selectUnitsInLoadUnit(db, loadUnit.id);
}

export function findUnitsOnTransportUnit(db: Queryable, transportUnitBK: string): Promise<PackagingUnitRow[]> {
  return selectUnitsOnTransportUnit(db, transportUnitBK);
}

export function findUnitsAtLoadUnitPosition(
  db: Queryable,
  transportUnitBK: string,
  position: string,
): Promise<PackagingUnitRow[]> {
  return selectUnitsAtLoadUnitPosition(db, transportUnitBK, position);
}

/**
 * D19: by SKU (findforproduct), by product key and LocationGroup with its children (findforproductinlg), or
 * everything lying on a Location. Exactly one of these forms must be asked for. D39: each form answers a page of
 * `amount` units and the cursor of the next when more follow, never fewer units than exist without saying so.
 */
export async function searchUnits(db: Queryable, search: PackagingUnitSearch): Promise<Page<ListedUnitRow>> {
  const sort: Sort = { property: search.sortProperty ?? 'createDt', direction: search.sortDirection ?? 'ASC' };
  const after = search.after;
  if (after && (after.property !== sort.property || after.direction !== sort.direction)) {
    throw invalidCursor('is the cursor of a list in another order');
  }
  const page: UnitPageQuery = { sort, limit: search.amount ?? DEFAULT_AMOUNT, after };
  const rows = await selectPage(db, search, page).catch((error: unknown) => {
    // A cursor's value PostgreSQL cannot read (class 22, e.g. a 25th hour) was not written by this service.
    if (after && (error as { code?: string }).code?.startsWith('22')) throw invalidCursor();
    throw error;
  });
  return pageOf(rows, page.limit, (row) =>
    unitCursorText({ property: sort.property, direction: sort.direction, key: row.sortKey, id: row.id }),
  );
}

function invalidCursor(message = 'must be the cursor of a next link'): Error {
  return validationError([{ path: 'after', message }]);
}

async function selectPage(db: Queryable, search: PackagingUnitSearch, page: UnitPageQuery): Promise<ListedUnitRow[]> {
  const forms = [search.sku, search.productPKey ?? search.locationGroupName, search.locationId].filter(
    (value) => value !== undefined,
  );
  if (forms.length !== 1) {
    throw validationError([
      { path: 'query', message: 'give sku, or productPKey with locationGroupName, or locationId' },
    ]);
  }
  if (search.sku !== undefined) {
    const product = await requireProductReference(db, search.sku);
    return selectReservableUnitsOfProduct(db, product.id, page);
  }
  if (search.locationId !== undefined) {
    const location = await requireLocation(db, { locationId: search.locationId });
    return selectUnitsOnLocation(db, location.id, page);
  }
  if (search.productPKey === undefined || search.locationGroupName === undefined) {
    const missing = search.productPKey === undefined ? 'productPKey' : 'locationGroupName';
    throw validationError([{ path: missing, message: 'required' }]);
  }
  const product = await requireProductReferenceByPKey(db, search.productPKey);
  const groupIds = await locationGroupIdsWithChildren(db, search.locationGroupName);
  return selectReservableUnitsOfProductInGroups(db, product.id, groupIds, page);
}

/** D24: the unit's history, also after it was deleted; a key that never had a unit is unknown. */
export async function findMovements(db: Queryable, pKey: string, query: PageQuery): Promise<Page<MovementRow>> {
  const key = asUuid(pKey);
  if (!key) throw packagingUnitErrors.notFoundByPKey(pKey);
  const rows = await selectMovements(db, key, { limit: query.limit + 1, before: query.after });
  if (rows.length === 0 && (query.after === undefined || !(await hasMovements(db, key)))) {
    throw packagingUnitErrors.notFoundByPKey(pKey);
  }
  return pageOf(rows, query.limit, (row) => row.id);
}

/** The business ids of the Locations the units lie on, by internal id (for ledger places and messages). */
export async function locationIdsOf(db: Queryable, units: readonly PackagingUnitRow[]): Promise<Map<number, string>> {
  const ids = units.flatMap((unit) => (unit.locationId === null ? [] : [unit.locationId]));
  const locations = await findLocationsByIds(db, [...new Set(ids)]);
  return new Map([...locations].map(([id, location]) => [id, location.locationId]));
}
