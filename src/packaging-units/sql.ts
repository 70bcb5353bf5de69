import type { Queryable } from '../db/tx.js';
import { dueOnUnit } from '../reservations/sql.js';
import type { SortDirection, SortProperty, UnitCursor } from './unit-cursor.js';

export interface PackagingUnitRow {
  id: number;
  pKey: string;
  productId: number;
  productPKey: string;
  sku: string;
  productLabel: string | null;
  productBaseMagnitude: string;
  productBaseCode: string;
  qtyMagnitude: string;
  qtyCode: string;
  qtyBase: string;
  reservedBase: string;
  /**
   * Of reservedBase, what reservations past their expiry but not yet ended hold (D40): the representation shows it
   * free; writers change the stored reservedBase.
   */
  dueBase: string;
  state: 'AVAILABLE' | 'LOCKED' | 'QC_LOCKED';
  messageNo: string | null;
  messageText: string | null;
  loadUnitId: number | null;
  loadUnitPKey: string | null;
  loadUnitPosition: string | null;
  loadUnitType: string | null;
  loadUnitLocked: boolean | null;
  transportUnitBK: string | null;
  locationId: number | null;
  dimension: unknown;
  weightMagnitude: string | null;
  weightCode: string | null;
  distribution: unknown;
  physicalPosition: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  labels: string[] | null;
  details: unknown;
  ol: number;
  createDt: Date;
  /** The embedded Product's and LoadUnit's versions: part of the unit's entity tag. */
  productOl: number;
  loadUnitOl: number | null;
}

const STORED_UNIT_COLUMNS = `pu.id, pu.p_key AS "pKey", pu.product_id AS "productId", p.p_key AS "productPKey", p.sku,
         p.label AS "productLabel", p.base_unit_magnitude::text AS "productBaseMagnitude",
         p.base_unit_code AS "productBaseCode", pu.qty_magnitude::text AS "qtyMagnitude", pu.qty_code AS "qtyCode",
         pu.qty_base::text AS "qtyBase", pu.reserved_base::text AS "reservedBase", pu.state,
         pu.message_no AS "messageNo", pu.message_text AS "messageText", pu.load_unit_id AS "loadUnitId",
         lu.p_key AS "loadUnitPKey", lu.physical_position AS "loadUnitPosition", lu.load_unit_type AS "loadUnitType",
         lu.locked AS "loadUnitLocked", tu.bk AS "transportUnitBK", pu.location_id AS "locationId", pu.dimension,
         pu.weight_magnitude::text AS "weightMagnitude", pu.weight_code AS "weightCode", pu.distribution,
         pu.physical_position AS "physicalPosition", pu.serial_number AS "serialNumber", pu.expires_at AS "expiresAt",
         pu.labels, pu.details, pu.ol, pu.create_dt AS "createDt", p.ol AS "productOl", lu.ol AS "loadUnitOl"`;

/**
 * A unit's columns as PackagingUnitRow names them, from `pu` (packaging_unit), `p` (product), `lu` (load_unit)
 * and `tu` (transport_unit); for statements that read units with other joins.
 */
export const UNIT_COLUMNS = `${STORED_UNIT_COLUMNS}, ${dueOnUnit('pu')}::text AS "dueBase"`;

/**
 * UNIT_COLUMNS for a transaction that has ended its Product's due reservations itself (allocation, D40): within it
 * none of the Product's units holds a due one (`now()` is the transaction's), so none is looked for.
 */
export const UNIT_COLUMNS_NOTHING_DUE = `${STORED_UNIT_COLUMNS}, '0' AS "dueBase"`;

const FROM_UNITS = `
    FROM packaging_unit pu
    JOIN product p ON p.id = pu.product_id
    LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
    LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id`;

const SELECT_UNITS = `SELECT ${UNIT_COLUMNS} ${FROM_UNITS}`;

/**
 * D19: units that can be reserved right now. What reservations past their expiry hold is free (D40); it is looked
 * for only on a unit its stored reservations fill.
 */
const RESERVABLE = `pu.state = 'AVAILABLE' AND p.availability_state = 'AVAILABLE'
                    AND (pu.qty_base > pu.reserved_base OR pu.qty_base > pu.reserved_base - ${dueOnUnit('pu')})
                    AND (lu.id IS NULL OR NOT lu.locked)`;

/** Whitelisted sort columns (D19) and the types their cursor values are cast to: a client's text never reaches the SQL. */
const SORT_COLUMNS: Record<SortProperty, { column: string; type: string }> = {
  createDt: { column: 'pu.create_dt', type: 'timestamptz' },
  expiresAt: { column: 'pu.expires_at', type: 'timestamptz' },
  quantity: { column: 'pu.qty_base', type: 'numeric' },
  pKey: { column: 'pu.p_key', type: 'uuid' },
};

export interface Sort {
  readonly property: SortProperty;
  readonly direction: SortDirection;
}

/** D39: a page of a unit search, in its order, from after the cursor (the first page without one). */
export interface UnitPageQuery {
  readonly sort: Sort;
  readonly limit: number;
  readonly after?: UnitCursor;
}

/** A unit as a search lists it: with its sort value, the text a next page's cursor carries. */
export type ListedUnitRow = PackagingUnitRow & { sortKey: string | null };

/**
 * The columns, condition and order of a page whose cursor key and id are bound as $keyParam and $keyParam+1.
 * Nulls sort last in both directions, so after a null key only null keys with a further id follow.
 */
function pageClauses(sort: Sort, keyParam: number): { select: string; after: string; orderAndLimit: string } {
  const { column, type } = SORT_COLUMNS[sort.property];
  const beyond = sort.direction === 'ASC' ? '>' : '<';
  const key = `$${keyParam}::${type}`;
  const id = `$${keyParam + 1}::bigint`;
  return {
    select: `SELECT ${column}::text AS "sortKey", ${UNIT_COLUMNS}`,
    after: `(${id} IS NULL OR CASE WHEN ${key} IS NULL THEN ${column} IS NULL AND pu.id ${beyond} ${id}
             ELSE ${column} IS NULL OR ${column} ${beyond} ${key} OR (${column} = ${key} AND pu.id ${beyond} ${id}) END)`,
    orderAndLimit: `ORDER BY ${column} ${sort.direction} NULLS LAST, pu.id ${sort.direction} LIMIT $${keyParam + 2}`,
  };
}

/** The cursor's key, id and the page size plus one (the extra row tells whether a next page exists). */
function pageValues(page: UnitPageQuery): unknown[] {
  return [page.after?.key ?? null, page.after?.id ?? null, page.limit + 1];
}

export async function selectUnitByPKey(db: Queryable, pKey: string): Promise<PackagingUnitRow | undefined> {
  const result = await db.query<PackagingUnitRow>({
    name: 'unit-by-pkey',
    text: `${SELECT_UNITS} WHERE pu.p_key = $1::uuid`,
    values: [pKey],
  });
  return result.rows[0];
}

export async function selectUnitsByIds(db: Queryable, ids: readonly number[]): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>({
    name: 'units-by-ids',
    text: `${SELECT_UNITS} WHERE pu.id = ANY($1::bigint[]) ORDER BY pu.id`,
    values: [ids],
  });
  return result.rows;
}

export async function selectUnitsInLoadUnit(db: Queryable, loadUnitId: number): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(`${SELECT_UNITS} WHERE pu.load_unit_id = $1 ORDER BY pu.id`, [
    loadUnitId,
  ]);
  return result.rows;
}

export async function selectUnitsOnTransportUnit(db: Queryable, transportUnitBK: string): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS} WHERE tu.bk = $1 ORDER BY lu.physical_position, pu.id`,
    [transportUnitBK],
  );
  return result.rows;
}

export async function selectUnitsAtLoadUnitPosition(
  db: Queryable,
  transportUnitBK: string,
  position: string,
): Promise<PackagingUnitRow[]> {
  const result = await db.query<PackagingUnitRow>(
    `${SELECT_UNITS} WHERE tu.bk = $1 AND lu.physical_position = $2 ORDER BY pu.id`,
    [transportUnitBK, position],
  );
  return result.rows;
}

export async function selectUnitsOnLocation(
  db: Queryable,
  locationId: number,
  page: UnitPageQuery,
): Promise<ListedUnitRow[]> {
  const clauses = pageClauses(page.sort, 2);
  const result = await db.query<ListedUnitRow>(
    `${clauses.select} ${FROM_UNITS} WHERE pu.location_id = $1 AND ${clauses.after} ${clauses.orderAndLimit}`,
    [locationId, ...pageValues(page)],
  );
  return result.rows;
}

export async function selectReservableUnitsOfProduct(
  db: Queryable,
  productId: number,
  page: UnitPageQuery,
): Promise<ListedUnitRow[]> {
  const clauses = pageClauses(page.sort, 2);
  const result = await db.query<ListedUnitRow>(
    `${clauses.select} ${FROM_UNITS}
      WHERE pu.product_id = $1 AND ${RESERVABLE} AND ${clauses.after} ${clauses.orderAndLimit}`,
    [productId, ...pageValues(page)],
  );
  return result.rows;
}

/** Units of the product in LoadUnits on TransportUnits standing in the groups, or lying on their Locations. */
export async function selectReservableUnitsOfProductInGroups(
  db: Queryable,
  productId: number,
  groupIds: readonly number[],
  page: UnitPageQuery,
): Promise<ListedUnitRow[]> {
  const clauses = pageClauses(page.sort, 3);
  const result = await db.query<ListedUnitRow>(
    `${clauses.select} ${FROM_UNITS}
      LEFT JOIN location held_on ON held_on.id = COALESCE(pu.location_id, tu.actual_location_id)
     WHERE pu.product_id = $1 AND ${RESERVABLE} AND held_on.location_group_id = ANY($2::bigint[])
       AND ${clauses.after} ${clauses.orderAndLimit}`,
    [productId, groupIds, ...pageValues(page)],
  );
  return result.rows;
}
