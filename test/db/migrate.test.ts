import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createEmptyDatabase, type EmptyDatabase } from '../support/empty-database.js';

const logger = pino({ level: 'silent' });

async function migrationFiles(): Promise<{ version: string; name: string; checksum: string }[]> {
  const names = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({
      version: name.slice(0, 4),
      name,
      checksum: createHash('sha256')
        .update(await readFile(path.join(MIGRATIONS_DIR, name), 'utf8'))
        .digest('hex'),
    })),
  );
}

async function recorded(pool: pg.Pool): Promise<unknown[]> {
  const { rows } = await pool.query('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
  return rows;
}

describe('migrate on the migrated test database', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('has recorded every migration file with its checksum', async () => {
    const files = await migrationFiles();
    expect(files.length).toBeGreaterThan(0);
    expect(await recorded(db.pool)).toStrictEqual(files);
  });

  it('is idempotent: a second run applies nothing', async () => {
    expect(await migrate(db.pool, logger)).toStrictEqual([]);
    expect(await recorded(db.pool)).toStrictEqual(await migrationFiles());
  });

  it('refuses to run when a landed migration was changed, and releases its lock for the next run', async () => {
    const [first] = await migrationFiles();
    await db.pool.query(`UPDATE schema_migrations SET checksum = 'edited' WHERE version = $1`, [first?.version]);
    await expect(migrate(db.pool, logger)).rejects.toThrow(
      `Migration ${first?.name} was changed after it was applied; add a new migration instead`,
    );

    await db.pool.query(`UPDATE schema_migrations SET checksum = $2 WHERE version = $1`, [
      first?.version,
      first?.checksum,
    ]);
    // The advisory lock is per session: a client that kept it would block every other connection here.
    const other = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      expect(await migrate(other, logger)).toStrictEqual([]);
    } finally {
      await other.end();
    }
  });
});

describe('migrate on a fresh empty database', () => {
  let fresh: EmptyDatabase;
  beforeAll(async () => {
    fresh = await createEmptyDatabase();
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it('applies each migration exactly once when several instances start at the same time', async () => {
    const files = await migrationFiles();
    const pools = Array.from({ length: 4 }, () => fresh.pool(1));
    const results = await Promise.all(pools.map((pool) => migrate(pool, logger)));
    expect(results.flat().sort()).toStrictEqual(files.map((file) => file.name));
    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1);
    expect(await recorded(fresh.pool())).toStrictEqual(files);
  });
});

describe('migrate with a failing migration', () => {
  let fresh: EmptyDatabase;
  let directory: string;
  beforeAll(async () => {
    fresh = await createEmptyDatabase();
    directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-migrations-'));
    await writeFile(path.join(directory, '0001_first.sql'), 'CREATE TABLE first_table (id integer);');
    await writeFile(path.join(directory, '0002_broken.sql'), 'CREATE TABLE second_table (id integer);\nSELECT 1 / 0;');
    await writeFile(path.join(directory, 'README.md'), 'not a migration');
    await writeFile(path.join(directory, '3_misnamed.sql'), 'CREATE TABLE misnamed (id integer);');
  });
  afterAll(async () => {
    await fresh?.drop();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('keeps the earlier migrations, leaves nothing of the failed one and names it', async () => {
    const pool = fresh.pool();
    await expect(migrate(pool, logger, directory)).rejects.toThrow(
      /^Migration 0002_broken\.sql failed: division by zero/,
    );
    const { rows: tables } = await pool.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    );
    expect(tables.map((table) => table.name)).toStrictEqual(['first_table', 'schema_migrations']);
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM schema_migrations');
    expect(rows).toStrictEqual([{ name: '0001_first.sql' }]);
  });

  it('applies the fixed migration on the next run, and only that one', async () => {
    await writeFile(path.join(directory, '0002_broken.sql'), 'CREATE TABLE second_table (id integer);');
    expect(await migrate(fresh.pool(), logger, directory)).toStrictEqual(['0002_broken.sql']);
  });
});

describe('migrate a database whose Product of a released reservation was deleted (0012)', () => {
  let fresh: EmptyDatabase;
  let directory: string;
  beforeAll(async () => {
    fresh = await createEmptyDatabase();
    directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-migrations-'));
    const before0012 = (await migrationFiles()).filter((file) => file.version < '0012');
    for (const file of before0012) {
      await writeFile(path.join(directory, file.name), await readFile(path.join(MIGRATIONS_DIR, file.name), 'utf8'));
    }
  });
  afterAll(async () => {
    await fresh?.drop();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('upgrades, leaving out the released reservation of the Product that is gone and keeping the others', async () => {
    const pool = fresh.pool();
    await migrate(pool, logger, directory);
    // Before 0012 a Product could be deleted once its units were gone, though released reservations named it.
    const { rows } = await pool.query<{ gone: string; kept: string }>(
      `INSERT INTO product (sku, label, description, base_unit_magnitude, base_unit_code, stock_zone)
       VALUES ('GONE', 'l', 'd', 1, 'PC', 'A'), ('KEPT', 'l', 'd', 1, 'PC', 'A')
       RETURNING id`,
    );
    const [gone, kept] = rows.map((row) => (row as unknown as { id: string }).id);
    for (const [reservation, product] of [
      ['00000000-0000-0000-0000-000000000001', gone],
      ['00000000-0000-0000-0000-000000000002', kept],
    ]) {
      await pool.query(
        `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                     reserved_before, reserved_after, reservation_id, actor)
         VALUES (gen_random_uuid(), $2, 'RESERVE', 'PC', 1, 1, 0, 1, $1, 'test')`,
        [reservation, product],
      );
      await pool.query(
        `INSERT INTO reservation (reservation_id, qty_base, actor, released_at) VALUES ($1, 1, 'test', now())`,
        [reservation],
      );
    }
    await pool.query('DELETE FROM product WHERE id = $1', [gone]);

    const applied = await migrate(pool, logger);

    expect(applied).toContain('0012_reservation_life.sql');
    const { rows: life } = await pool.query<{ reservation_id: string; state: string }>(
      'SELECT reservation_id, state FROM reservation_life ORDER BY reservation_id',
    );
    expect(life).toStrictEqual([{ reservation_id: '00000000-0000-0000-0000-000000000002', state: 'RELEASED' }]);
  });
});
