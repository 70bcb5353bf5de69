import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openReadReplica, type ReadReplica } from '../../src/db/read-replica.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Issue 17: a DATABASE_READ_URL that names a server which is no standby (a copy-paste of the primary's URL, a
 * promoted replica) is never read from: its data may be anything. Needs no replica, so it runs everywhere.
 */
describe('a DATABASE_READ_URL that is no streaming replica', () => {
  let database: TestDatabase;
  let readReplica: ReadReplica;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = testConfig({ DATABASE_URL: database.url, DATABASE_READ_URL: database.url });
    readReplica = await openReadReplica(database.pool, config.db, config.readReplica!, pino({ level: 'silent' }));
  });

  afterAll(async () => {
    await readReplica?.close();
    await database?.drop();
  });

  it('is reported DOWN as not a standby in health, and every read goes to the primary', async () => {
    expect(readReplica.health()).toStrictEqual({
      status: 'DOWN',
      details: { reads: 'primary', state: 'not a standby', maxLagMs: 5000 },
    });
    const served: unknown[] = [];
    const answer = await readReplica.run(async (db) => {
      served.push(db);
      return (await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one;
    });
    expect(answer).toBe(1);
    expect(served).toHaveLength(1);
    expect(served[0]).toBe(database.pool);
  });
});
