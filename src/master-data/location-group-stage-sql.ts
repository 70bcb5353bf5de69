import { copyRow } from '../db/copy.js';
import type { Tx } from '../db/tx.js';
import type { LocationGroupUpsert } from './schemas.js';

/**
 * The staging table of one `PUT /v1/location-groups` (issue 34 item 5): one row per group of the body, `line` being
 * its index there. `id` is the group's id, taken from the stored group (`existed`) or from the table's sequence
 * before anything is inserted, so that parents named in the same body resolve in the one INSERT.
 * Temporary and dropped at commit: the session's own, written without WAL.
 */
export async function createLocationGroupStage(tx: Tx): Promise<void> {
  await tx.query(
    `CREATE TEMPORARY TABLE location_group_stage (
       line integer NOT NULL, name text NOT NULL, parent text, id bigint, existed boolean NOT NULL DEFAULT false
     ) ON COMMIT DROP`,
  );
}

export const COPY_INTO_LOCATION_GROUP_STAGE = 'COPY location_group_stage (line, name, parent) FROM STDIN';

export function locationGroupStageRow(group: LocationGroupUpsert, line: number): string {
  return copyRow([line, group.name, group.parent ?? null]);
}

/** Temporary tables are never analysed by autovacuum: without statistics the joins below would be planned blind. */
export async function analyzeLocationGroupStage(tx: Tx): Promise<void> {
  await tx.query('ANALYZE location_group_stage');
}

/** Each line repeating the name of an earlier one, with the line that named it first; in line order. */
export async function selectStagedDuplicateNames(tx: Tx, limit: number): Promise<{ line: number; first: number }[]> {
  const result = await tx.query<{ line: number; first: number }>(
    `SELECT line, first
       FROM (SELECT line, min(line) OVER (PARTITION BY name) AS first FROM location_group_stage) AS d
      WHERE line <> first
      ORDER BY line
      LIMIT $1::integer`,
    [limit],
  );
  return result.rows;
}

/** Lines naming their own group as parent, in line order. */
export async function selectStagedOwnParents(tx: Tx, limit: number): Promise<number[]> {
  const result = await tx.query<{ line: number }>(
    'SELECT line FROM location_group_stage WHERE parent = name ORDER BY line LIMIT $1::integer',
    [limit],
  );
  return result.rows.map((row) => row.line);
}

/** The parent of the first line naming one that is neither in the body nor stored. */
export async function selectFirstUnknownStagedParent(tx: Tx): Promise<string | undefined> {
  const result = await tx.query<{ parent: string }>(
    `SELECT s.parent
       FROM location_group_stage s
      WHERE s.parent IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM location_group_stage t WHERE t.name = s.parent)
        AND NOT EXISTS (SELECT 1 FROM location_group g WHERE g.name = s.parent)
      ORDER BY s.line
      LIMIT 1`,
  );
  return result.rows[0]?.parent;
}

/** Gives every staged group its id: the stored group's, or a new one from the table's identity sequence. */
export async function assignStagedLocationGroupIds(tx: Tx): Promise<void> {
  await tx.query(
    `UPDATE location_group_stage s SET id = g.id, existed = true FROM location_group g WHERE g.name = s.name`,
  );
  await tx.query(`UPDATE location_group_stage SET id = nextval('location_group_id_seq'::regclass) WHERE NOT existed`);
}

// A staged group's parent id: a group of the body, or a stored one.
const STAGED_WITH_PARENT_ID = `
  SELECT s.id, s.name, s.existed, coalesce(ps.id, pg.id) AS parent_id
    FROM location_group_stage s
    LEFT JOIN location_group_stage ps ON ps.name = s.parent
    LEFT JOIN location_group pg ON pg.name = s.parent`;

/**
 * Inserts the groups not stored yet with their parents, in one statement: the foreign key is checked when it ends,
 * so a parent may come after its child.
 */
export async function insertNewStagedLocationGroups(tx: Tx): Promise<void> {
  await tx.query(
    `INSERT INTO location_group (id, name, parent_id) OVERRIDING SYSTEM VALUE
     SELECT n.id, n.name, n.parent_id FROM (${STAGED_WITH_PARENT_ID}) AS n WHERE NOT n.existed ORDER BY n.id`,
  );
}

/** Sets the parent of each stored group of the body where it differs; its `ol` rises (D4). */
export async function updateStoredStagedLocationGroups(tx: Tx): Promise<void> {
  await tx.query(
    `UPDATE location_group g
        SET parent_id = n.parent_id, ol = g.ol + 1, last_modified_dt = now()
       FROM (${STAGED_WITH_PARENT_ID}) AS n
      WHERE n.existed AND g.id = n.id AND g.parent_id IS DISTINCT FROM n.parent_id`,
  );
}

/** Staged groups that are their own ancestor, in line order, each with the cycle as a list of names from itself back. */
export async function selectStagedLocationGroupCycles(
  tx: Tx,
  limit: number,
): Promise<{ line: number; cycle: string[] }[]> {
  const result = await tx.query<{ line: number; cycle: string[] }>(
    `WITH RECURSIVE walk(line, start_id, id, path) AS (
       SELECT s.line, g.id, g.parent_id, ARRAY[g.id]
         FROM location_group_stage s
         JOIN location_group g ON g.id = s.id
        WHERE g.parent_id IS NOT NULL
       UNION ALL
       SELECT w.line, w.start_id, p.parent_id, w.path || p.id
         FROM walk w
         JOIN location_group p ON p.id = w.id
        WHERE p.parent_id IS NOT NULL AND NOT p.id = ANY(w.path)
     )
     SELECT w.line,
            ARRAY(SELECT g.name FROM unnest(w.path || w.start_id) WITH ORDINALITY AS u(id, n)
                    JOIN location_group g ON g.id = u.id ORDER BY u.n) AS cycle
       FROM walk w
      WHERE w.id = w.start_id
      ORDER BY w.line
      LIMIT $1::integer`,
    [limit],
  );
  return result.rows;
}
