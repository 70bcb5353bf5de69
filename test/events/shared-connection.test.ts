import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { advancePrunedThrough } from '../../src/events/partitions.js';
import { sequenceCommittedEvents } from '../../src/events/sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The events' background pool (two connections) runs numbering and pruning on the same connections. pg caches a
 * named statement per connection and refuses the same name for another text, so two statements that shared a name
 * made every numbering run fail on a connection a prune had used (bench scenario 17 found it).
 */
describe('numbering and pruning on one connection', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    registerTypeParsers();
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('numbers events after a prune moved the feed start, and prunes again after numbering', async () => {
    await db.pool.query(
      `INSERT INTO event_outbox (type, resource_key, resource, request_id)
       VALUES ('product.event.created', 'SHARED-1', '{}', 'shared-connection')`,
    );
    await advancePrunedThrough(pool, 0);
    const numbered = await withTransaction(pool, (tx) => sequenceCommittedEvents(tx, 10));
    await advancePrunedThrough(pool, 0);

    expect(numbered.assigned).toBe(1);
    const { rows } = await db.pool.query<{ numbered: boolean }>(
      "SELECT position IS NOT NULL AS numbered FROM event_outbox WHERE request_id = 'shared-connection'",
    );
    expect(rows).toEqual([{ numbered: true }]);
  });
});

/** Every statement name written in the source names one statement: a name given twice is the defect above. */
describe('named statements', () => {
  it('each name appears once in the source', async () => {
    const root = path.resolve(import.meta.dirname, '../../src');
    const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
    const names: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(root, file), 'utf8');
      names.push(...[...text.matchAll(/\bname: '([a-z0-9-]+)'/g)].map((match) => match[1]!));
    }
    const repeated = names.filter((name, index) => names.indexOf(name) !== index);

    expect(names.length).toBeGreaterThan(20);
    expect(repeated).toEqual([]);
  });
});
