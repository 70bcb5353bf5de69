import type { Tx } from '../db/tx.js';
import {
  toLoadUnit,
  toProductSummary,
  type LoadUnitRow,
  type ProductSummaryRow,
  type RawLoadUnit,
  type RawProductSummary,
} from '../load-units/sql.js';
import { UNIT_COLUMNS, type PackagingUnitRow } from './sql.js';

/** What `lockPickTargetLoadUnit` found, when the LoadUnit was there or could be created. */
export interface PickTargetLoadUnit {
  /** D21 (`in-place`) or D17 (`assigned`) refuses the pick; nothing was changed. */
  readonly refusal: 'in-place' | 'assigned' | null;
  readonly created: boolean;
  /** D17: the LoadUnit had no Product and was assigned the unit's. */
  readonly assigned: boolean;
  /** As the admission left it, with its Product. */
  readonly loadUnit: LoadUnitRow;
  readonly product: ProductSummaryRow | undefined;
  /** The unit as locked; undefined when a writer changed it after the statement's snapshot (read it again). */
  readonly unit: PackagingUnitRow | undefined;
}

type Prefixed<T, P extends string> = { [K in keyof T as `${P}${string & K}`]: T[K] };

type PickTargetRaw = {
  target_found: boolean;
  refusal: 'in-place' | 'assigned' | null;
  target_created: boolean;
  product_assigned: boolean;
  unit_version: string | null;
  read_version: string | null;
} & Prefixed<RawLoadUnit, 'lu_'> &
  Prefixed<RawProductSummary, 'lp_'> &
  Partial<PackagingUnitRow>;

const unprefixed = <T>(row: Record<string, unknown>, prefix: string): T =>
  Object.fromEntries(
    Object.entries(row).flatMap(([key, value]) => (key.startsWith(prefix) ? [[key.slice(prefix.length), value]] : [])),
  ) as T;

/**
 * D32: locks a pick's target LoadUnit (created when missing and `newLoadUnitType` is given), then the unit, and
 * admits the unit's Product (D17), in one round trip (migration 0017). The unit is read in the same statement; as
 * that read sees the rows as of the statement's start, it counts only if the lock found the version it read.
 * Undefined: no LoadUnit at the position and none may be created.
 */
export async function lockPickTargetLoadUnit(
  tx: Tx,
  target: { transportUnitBK: string; position: string; newLoadUnitType: string | null },
  unitId: number,
  mixedAllowed: boolean,
): Promise<PickTargetLoadUnit | undefined> {
  const result = await tx.query<PickTargetRaw>({
    name: 'lock-pick-target-load-unit',
    text: `SELECT t.*, lp.id AS lp_id, lp.p_key AS lp_p_key, lp.sku AS lp_sku, lp.label AS lp_label,
                  lp.base_unit_magnitude::text AS lp_base_unit_magnitude, lp.base_unit_code AS lp_base_unit_code,
                  lp.description AS lp_description, lp.availability_state AS lp_availability_state, lp.ol AS lp_ol,
                  u.*
             FROM lock_pick_target_load_unit($1::text, $2::text, $3::text, $4::bigint, $5::boolean) t
             LEFT JOIN product lp ON lp.id = t.lu_product_id
             LEFT JOIN LATERAL (
                    SELECT pu.xmin::text AS read_version, ${UNIT_COLUMNS}
                      FROM packaging_unit pu
                      JOIN product p ON p.id = pu.product_id
                      LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id
                      LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
                     WHERE pu.id = $4::bigint AND t.target_found) u ON true`,
    values: [target.transportUnitBK, target.position, target.newLoadUnitType, unitId, mixedAllowed],
  });
  const raw = result.rows[0]!;
  const {
    target_found: found,
    refusal,
    target_created: created,
    product_assigned: assigned,
    unit_version: lockedVersion,
    read_version: readVersion,
    ...columns
  } = raw;
  if (!found) return undefined;
  const unit = Object.fromEntries(
    Object.entries(columns).filter(([key]) => !key.startsWith('lu_') && !key.startsWith('lp_')),
  ) as unknown as PackagingUnitRow;
  return {
    refusal,
    created,
    assigned,
    loadUnit: toLoadUnit(unprefixed<RawLoadUnit>(raw, 'lu_')),
    product: raw.lp_id === null ? undefined : toProductSummary(unprefixed<RawProductSummary>(raw, 'lp_')),
    unit: readVersion !== null && readVersion === lockedVersion ? unit : undefined,
  };
}
