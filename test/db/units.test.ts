import { describe, expect, it } from 'vitest';
import { UNITS } from '../../src/units/units.js';
import { useTestApp } from '../support/app.js';

const ctx = useTestApp();

describe('the units of measure in PostgreSQL (migration 0003)', () => {
  it('has the same codes, kinds and factors as src/units/units.ts, which computes with them in JavaScript', async () => {
    const { rows } = await ctx.db.pool.query<{ code: string; kind: string | null; factor: string | null }>(
      `SELECT code, unit_kind(code) AS kind, trim_scale(unit_factor(code))::text AS factor
         FROM unnest($1::text[]) AS code`,
      [[...UNITS.map((unit) => unit.code), 'pc', 'LB']],
    );

    expect(rows).toEqual([
      ...UNITS.map((unit) => ({ code: unit.code, kind: unit.kind, factor: unit.factor.toFixed() })),
      { code: 'pc', kind: null, factor: null },
      { code: 'LB', kind: null, factor: null },
    ]);
  });
});
