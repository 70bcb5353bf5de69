/**
 * One column of rows as an array, for the set-based statements that take one array parameter per column
 * (`unnest($1::text[], …)`); an absent value becomes SQL NULL.
 */
export function columnOf<T, K extends keyof T>(rows: readonly T[], key: K): (T[K] | null)[] {
  return rows.map((row) => row[key] ?? null);
}
