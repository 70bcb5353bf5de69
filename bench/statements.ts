import type pg from 'pg';

/** One statement (as pg_stat_statements normalises it) and what it cost per operation. */
export interface StatementCost {
  /** The statement's text, whitespace collapsed, cut at 80 characters. */
  readonly statement: string;
  readonly perOperation: number;
  /** Execution time on the server (wall time: includes lock waits), ms per operation. */
  readonly msPerOperation: number;
  readonly rowsPerOperation: number;
  /** WAL the statement wrote, bytes per operation (COMMIT's own record is not counted by pg_stat_statements). */
  readonly walBytesPerOperation: number;
}

export interface StatementProfile {
  readonly operations: number;
  /** Statements the service sent per operation; each is one round trip (extended protocol, no pipelining). */
  readonly statementsPerOperation: number;
  /** Server execution time of all of them, ms per operation. */
  readonly msPerOperation: number;
  readonly walBytesPerOperation: number;
  readonly byStatement: readonly StatementCost[];
}

export interface StatementCounting {
  /** The statements since the start, per operation; undefined where pg_stat_statements is not loaded. */
  stop(operations: number): Promise<StatementProfile | undefined>;
}

// The runner's own statements in the window: the sampling of pg_stat_activity (pg-waits.ts) and this counting.
const RUNNER_STATEMENT = /pg_stat_activity|pg_stat_statements/;

const THIS_DATABASE = `(SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * Counts the statements run in the bench database from now until `stop`, with pg_stat_statements when the
 * server has it loaded (the embedded server of the benchmark does; a BENCH_DATABASE_URL server may not). Every
 * connection to that database counts: the requests' transactions and what the service runs after them (the
 * event sequencer), which is what an operation costs; the runner's own sampling is left out.
 */
export async function countStatements(pool: pg.Pool): Promise<StatementCounting> {
  let available: boolean;
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pool.query(`SELECT pg_stat_statements_reset(0, ${THIS_DATABASE}, 0)`);
    // The columns read at the end (PostgreSQL 14 and later).
    await pool.query(
      'SELECT query, calls, total_exec_time, rows, wal_bytes FROM pg_stat_statements WHERE toplevel LIMIT 0',
    );
    available = true;
  } catch {
    available = false;
  }
  return {
    async stop(operations) {
      if (!available || operations <= 0) return undefined;
      const { rows } = await pool.query<{ query: string; calls: string; ms: number; rows: string; wal: string }>(
        `SELECT query, calls::text, total_exec_time AS ms, rows::text, wal_bytes::text AS wal
           FROM pg_stat_statements WHERE dbid = ${THIS_DATABASE} AND toplevel`,
      );
      const byStatement = rows
        .filter((row) => !RUNNER_STATEMENT.test(row.query))
        .map((row) => ({
          statement: row.query.replace(/\s+/g, ' ').trim().slice(0, 80),
          perOperation: Number(row.calls) / operations,
          msPerOperation: row.ms / operations,
          rowsPerOperation: Number(row.rows) / operations,
          walBytesPerOperation: Number(row.wal) / operations,
        }))
        .filter((cost) => cost.perOperation >= 0.001)
        .sort((a, b) => b.msPerOperation - a.msPerOperation);
      const sum = (pick: (cost: StatementCost) => number): number =>
        byStatement.reduce((total, cost) => total + pick(cost), 0);
      return {
        operations,
        statementsPerOperation: sum((cost) => cost.perOperation),
        msPerOperation: sum((cost) => cost.msPerOperation),
        walBytesPerOperation: sum((cost) => cost.walBytesPerOperation),
        byStatement,
      };
    },
  };
}

/**
 * The profile as a note of the scenario's details: the total, then the statements by server time; `counted` names
 * what the operations are.
 */
export function statementNote(
  profile: StatementProfile | undefined,
  operation: string,
  counted = 'answered requests',
): string {
  if (!profile) return 'Statements per operation: not counted (pg_stat_statements is not loaded on this server).';
  const round = (value: number, digits: number): string => value.toFixed(digits);
  const statements = profile.byStatement
    .map(
      (cost) =>
        `${round(cost.perOperation, 2)} × \`${cost.statement}\` ${round(cost.msPerOperation, 3)} ms, ` +
        `${round(cost.walBytesPerOperation, 0)} B WAL`,
    )
    .join('; ');
  return (
    `Statements per ${operation} (pg_stat_statements, every connection to the service's database during the ` +
    `measured run, ÷ ${profile.operations.toLocaleString('en-US')} ${counted}; each is one round trip): ` +
    `**${round(profile.statementsPerOperation, 2)}**, ${round(profile.msPerOperation, 3)} ms of server time ` +
    `(wall, lock waits included), ${round(profile.walBytesPerOperation, 0)} bytes of WAL. By server time: ${statements}.`
  );
}
