import type { Queryable, Tx } from '../db/tx.js';

export interface LocationGroupRow {
  readonly id: number;
  readonly pKey: string;
  readonly name: string;
  /** Name of the parent group, null for a root. */
  readonly parentName: string | null;
  readonly ol: number;
  readonly createDt: Date;
}

// bigint columns arrive as strings unless a type parser is installed; Number() reads both.
type Id = string | number;

interface RawLocationGroup {
  id: Id;
  p_key: string;
  name: string;
  parent_name: string | null;
  ol: number;
  create_dt: Date;
}

function toLocationGroup(raw: RawLocationGroup): LocationGroupRow {
  return {
    id: Number(raw.id),
    pKey: raw.p_key,
    name: raw.name,
    parentName: raw.parent_name,
    ol: raw.ol,
    createDt: raw.create_dt,
  };
}

/**
 * Serialises writers of location groups (readers and location writes are not blocked), so that the cycle
 * check after an upsert sees every other change to the tree.
 */
export async function lockLocationGroupsForWrite(tx: Tx): Promise<void> {
  await tx.query('LOCK TABLE location_group IN SHARE ROW EXCLUSIVE MODE');
}

/** Which of these names are stored groups. */
export async function selectExistingLocationGroupNames(db: Queryable, names: readonly string[]): Promise<string[]> {
  const result = await db.query<{ name: string }>('SELECT name FROM location_group WHERE name = ANY($1::text[])', [
    names,
  ]);
  return result.rows.map((row) => row.name);
}

/** Creates the groups not stored yet, without a parent; answers the ids it created. */
export async function insertMissingLocationGroups(tx: Tx, names: readonly string[]): Promise<number[]> {
  const result = await tx.query<{ id: Id }>(
    `INSERT INTO location_group (name)
     SELECT r.name FROM unnest($1::text[]) AS r(name) ORDER BY r.name
     ON CONFLICT (name) DO NOTHING
     RETURNING id`,
    [names],
  );
  return result.rows.map((row) => Number(row.id));
}

/**
 * Sets each named group's parent (null: none) where it differs. `ol` rises for groups that existed before
 * this request (D4); the ones just created stay at 0.
 */
export async function updateLocationGroupParents(
  tx: Tx,
  names: readonly string[],
  parents: readonly (string | null)[],
  createdIds: readonly number[],
): Promise<void> {
  await tx.query(
    `UPDATE location_group g
        SET parent_id = p.id,
            ol = g.ol + CASE WHEN g.id = ANY($3::bigint[]) THEN 0 ELSE 1 END,
            last_modified_dt = now()
       FROM unnest($1::text[], $2::text[]) AS r(name, parent)
       LEFT JOIN location_group p ON p.name = r.parent
      WHERE g.name = r.name
        AND g.parent_id IS DISTINCT FROM p.id`,
    [names, parents, createdIds],
  );
}

/** Groups among `names` that are their own ancestor, each with the cycle as a list of names from itself back. */
export async function selectLocationGroupCycles(
  db: Queryable,
  names: readonly string[],
): Promise<{ name: string; cycle: string[] }[]> {
  const result = await db.query<{ name: string; cycle: string[] }>(
    `WITH RECURSIVE walk(start_id, id, path) AS (
       SELECT g.id, g.parent_id, ARRAY[g.id]
         FROM location_group g
        WHERE g.name = ANY($1::text[]) AND g.parent_id IS NOT NULL
       UNION ALL
       SELECT w.start_id, p.parent_id, w.path || p.id
         FROM walk w
         JOIN location_group p ON p.id = w.id
        WHERE p.parent_id IS NOT NULL AND NOT p.id = ANY(w.path)
     )
     SELECT s.name,
            ARRAY(SELECT g.name FROM unnest(w.path || w.start_id) WITH ORDINALITY AS u(id, n)
                    JOIN location_group g ON g.id = u.id ORDER BY u.n) AS cycle
       FROM walk w
       JOIN location_group s ON s.id = w.start_id
      WHERE w.id = w.start_id
      ORDER BY s.name`,
    [names],
  );
  return result.rows;
}

export async function selectLocationGroupByName(db: Queryable, name: string): Promise<LocationGroupRow | undefined> {
  const result = await db.query<RawLocationGroup>(
    `SELECT g.id, g.p_key, g.name, p.name AS parent_name, g.ol, g.create_dt
       FROM location_group g
       LEFT JOIN location_group p ON p.id = g.parent_id
      WHERE g.name = $1::text`,
    [name],
  );
  const raw = result.rows[0];
  return raw && toLocationGroup(raw);
}

/** The ids of the named groups and of all their descendants (D14: a group contains its child groups). */
export async function selectLocationGroupTreeIds(db: Queryable, names: readonly string[]): Promise<number[]> {
  const result = await db.query<{ id: Id }>(
    `WITH RECURSIVE tree(id) AS (
       SELECT id FROM location_group WHERE name = ANY($1::text[])
       UNION
       SELECT c.id FROM location_group c JOIN tree t ON c.parent_id = t.id
     )
     SELECT id FROM tree ORDER BY id`,
    [names],
  );
  return result.rows.map((row) => Number(row.id));
}
