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
