import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { Logger } from 'pino';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

// Any constant works; every instance must use the same one so concurrent starts queue instead of racing.
const MIGRATION_LOCK_KEY = 7_241_913_001;

interface MigrationFile {
  readonly version: string;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
  /**
   * `NNNN_name.before.sql`, run first in the same transaction: it prepares data a landed migration did not expect,
   * without changing that migration's text, whose checksum databases that applied it have recorded.
   */
  readonly before: string | undefined;
}

async function readMigrations(directory: string): Promise<MigrationFile[]> {
  const files = await readdir(directory);
  const names = files.filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(`${directory}/${name}`, 'utf8');
      const beforeName = name.replace(/\.sql$/, '.before.sql');
      return {
        version: name.slice(0, 4),
        name,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
        before: files.includes(beforeName) ? await readFile(`${directory}/${beforeName}`, 'utf8') : undefined,
      };
    }),
  );
}

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock so that several
 * instances starting together apply each migration exactly once. A landed migration that was edited
 * afterwards stops the start: the schema would no longer match the code.
 */
export async function migrate(pool: pg.Pool, logger: Logger, directory = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(directory);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Map(
      (
        await client.query<{ version: string; checksum: string }>('SELECT version, checksum FROM schema_migrations')
      ).rows.map((row) => [row.version, row.checksum]),
    );
    const appliedNow: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.version);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`Migration ${migration.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        if (migration.before !== undefined) await client.query(migration.before);
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      appliedNow.push(migration.name);
      logger.info({ migration: migration.name }, 'migration applied');
    }
    return appliedNow;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}
