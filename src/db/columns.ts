/**
 * One column of rows as an array, for the set-based statements that take one array parameter per column
 * (`unnest($1::text[], …)`); an absent value becomes SQL NULL.
 */
export function columnOf<T, K extends keyof T>(rows: readonly T[], key: K): (T[K] | null)[] {
  return rows.map((row) => row[key] ?? null);
}

type ColumnValue = string | number | boolean | null;

const NEEDS_ESCAPE = /[\\"]/;
const ESCAPED = /[\\"]/g;

/**
 * A column as the text of a PostgreSQL array (`{"a","b",NULL}`), for a `$1::text[]` (or `::int[]`, `::json[]` …)
 * parameter, built with one join. node-pg turns an array parameter into text by appending element after element:
 * for a bulk of 100,000 rows that holds tens of MB of intermediate strings and takes twice as long
 * (bench/notes.md, Scenario 3). SQL NULL stays NULL.
 */
export function arrayLiteral(column: readonly ColumnValue[] | null): string | null {
  if (column === null) return null;
  const elements = new Array<string>(column.length);
  for (let index = 0; index < column.length; index++) {
    const value = column[index];
    if (value === null || value === undefined) {
      elements[index] = 'NULL';
    } else {
      const text = String(value);
      elements[index] = NEEDS_ESCAPE.test(text) ? `"${text.replace(ESCAPED, '\\$&')}"` : `"${text}"`;
    }
  }
  return `{${elements.join(',')}}`;
}
