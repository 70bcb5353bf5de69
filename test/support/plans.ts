import type pg from 'pg';
import { vi } from 'vitest';
import type { Tx } from '../../src/db/tx.js';
import type { TestContext } from './app.js';

/** The part of an EXPLAIN (ANALYZE, FORMAT JSON) plan node that says what a scan read. */
export interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/**
 * Rows each scan of the tables `counted` accepts (by name; an index by its name where the plan names no table) read,
 * returned or filtered out, and entries each bitmap scan of their indexes read, over all its loops.
 */
export function rowsRead(node: PlanNode, counted: (name: string) => boolean): number {
  const name = node['Relation Name'] ?? node['Index Name'];
  const own =
    name !== undefined && counted(name)
      ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
        node['Actual Loops']
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, counted), 0);
}

/** What one statement read: its text's start, and the rows and index entries it read of the tables counted. */
export interface StatementRead {
  statement: string;
  rows: number;
}

/**
 * `run` on a connection of its own, rolled back, then every statement it sent run again with EXPLAIN ANALYZE (same
 * parameters, same order, so the same locks and rows), rolled back: what `run` answered, and what each statement
 * read of the tables `counted` accepts.
 */
export async function rowsReadBy<T>(
  ctx: TestContext,
  run: (tx: Tx) => Promise<T>,
  counted: (name: string) => boolean,
): Promise<{ answer: T; statements: StatementRead[] }> {
  const client = await ctx.db.pool.connect();
  try {
    await client.query('BEGIN');
    const query = vi.spyOn(client, 'query');
    const answer = await run(client as Tx);
    const sent = query.mock.calls.map(([config, values]) =>
      typeof config === 'string'
        ? { text: config, values: values as unknown[] }
        : { text: (config as pg.QueryConfig).text, values: (config as pg.QueryConfig).values },
    );
    query.mockRestore();
    await client.query('ROLLBACK');
    await client.query('BEGIN');
    const statements: StatementRead[] = [];
    for (const { text, values } of sent) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      );
      statements.push({
        statement: text.replace(/\s+/g, ' ').slice(0, 60),
        rows: rowsRead(rows[0]!['QUERY PLAN'][0].Plan, counted),
      });
    }
    return { answer, statements };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}
