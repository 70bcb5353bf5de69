/**
 * One column of rows as an array, for the set-based statements that take one array parameter per column
 * (`unnest($1::text[], …)`); an absent value becomes SQL NULL.
 */
export function columnOf<T, K extends keyof T>(rows: readonly T[], key: K): (T[K] | null)[] {
  return rows.map((row) => row[key] ?? null);
}

/**
 * Like columnOf, but SQL NULL instead of an array when no row has the value. For a column of a multi-array
 * `unnest(…)` next to one that is never NULL: unnest pads a NULL array with NULLs, and a bulk insert then
 * neither builds nor parses one NULL per row for each column the client left out.
 */
export function sparseColumnOf<T, K extends keyof T>(rows: readonly T[], key: K): (T[K] | null)[] | null {
  const column = columnOf(rows, key);
  return column.every((value) => value === null) ? null : column;
}
