import { describe, expect, it } from 'vitest';
import { arrayLiteral } from '../../src/db/columns.js';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

describe('a column sent as an array literal (src/db/columns.ts)', () => {
  it('reads back in PostgreSQL as the very values, whatever characters they hold', async () => {
    const texts = ['', 'NULL', 'null', 'a,b', '{x}', ' spaced ', 'quote"', 'back\\slash', '\\"', 'tab\t', 'new\nline'];
    const column = [...texts, 'Größe 日本 😀', '{"json":[1,"two\\"\\\\"]}', null];

    const { rows } = await ctx.db.pool.query<{ texts: (string | null)[]; flags: boolean[]; numbers: number[] }>(
      'SELECT $1::text[] AS texts, $2::boolean[] AS flags, $3::int[] AS numbers',
      [arrayLiteral(column), arrayLiteral([true, false]), arrayLiteral([0, -1, 2_147_483_647])],
    );

    expect(rows).toEqual([{ texts: column, flags: [true, false], numbers: [0, -1, 2_147_483_647] }]);
  });

  it('is SQL NULL for a column left out, and an empty array for no rows', async () => {
    const { rows } = await ctx.db.pool.query<{ absent: null; empty: string[] }>(
      'SELECT $1::text[] AS absent, $2::text[] AS empty',
      [arrayLiteral(null), arrayLiteral([])],
    );

    expect(rows).toEqual([{ absent: null, empty: [] }]);
  });
});
