import type { Express } from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from './pgbouncer.js';
import { TEST_SECRET } from './tokens.js';

export interface TestContext {
  app: Express;
  /** The file's database, reached directly: what tests arrange and check with. */
  db: TestDatabase;
  config: Config;
  events: EventsRuntime;
}

/**
 * The hosts test files send (supertest sends 127.0.0.1), allowed as a deployment allows its own (D36). A file
 * that tests the default passes `ALLOWED_HOSTS: undefined`.
 */
export const TEST_ALLOWED_HOSTS = '127.0.0.1, localhost, inventory.example, inventory.test, stock.test, shop.example';

export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: 'silent',
    ALLOWED_HOSTS: TEST_ALLOWED_HOSTS,
    ...overrides,
  });
}

/** Server connections of the pooler in TEST_THROUGH_PGBOUNCER runs: few, so statements change connections. */
const PGBOUNCER_POOL_SIZE = 3;

/**
 * Issue 17: with TEST_THROUGH_PGBOUNCER=1 the app reaches the file's database through a PgBouncer of its own in
 * transaction mode, configured as a deployment would be (DATABASE_POOL_MODE=transaction, DATABASE_DIRECT_URL), so
 * the HTTP test files prove the service behind a transaction pooler.
 */
async function throughPgBouncer(
  db: TestDatabase,
  environment: Record<string, string | undefined>,
): Promise<{ config: Config; database: Database; bouncer: PgBouncer }> {
  if (!pgbouncerBinary) throw new Error('TEST_THROUGH_PGBOUNCER=1 but pgbouncer is not installed');
  const bouncer = await startPgBouncer({ serverUrl: db.url, poolSize: PGBOUNCER_POOL_SIZE });
  const config = testConfig({
    DATABASE_URL: bouncer.urlOf(db.name),
    DATABASE_DIRECT_URL: db.url,
    DATABASE_POOL_MODE: 'transaction',
    ...environment,
  });
  const database = await openDatabase(config, pino({ level: 'silent' }));
  return { config, database, bouncer };
}

/**
 * Registers hooks that give the file its own database and the real application on it.
 * The returned object is filled in by beforeAll.
 */
export function useTestApp(environment: Record<string, string | undefined> = {}): TestContext {
  const context = {} as TestContext;
  let pooled: { database: Database; bouncer: PgBouncer } | undefined;
  beforeAll(async () => {
    context.db = await createTestDatabase();
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    if (process.env.TEST_THROUGH_PGBOUNCER === '1') {
      const { config, database, bouncer } = await throughPgBouncer(context.db, environment);
      pooled = { database, bouncer };
      context.config = config;
      context.events = startEvents(database.pool, config, logger, database.sessionPool);
      context.app = createApp({ config, pool: database.pool, logger, events: context.events });
      return;
    }
    context.config = testConfig(environment);
    context.events = startEvents(context.db.pool, context.config, logger);
    context.app = createApp({ config: context.config, pool: context.db.pool, logger, events: context.events });
  });
  afterAll(async () => {
    await context.events?.stop();
    await pooled?.database.close();
    await pooled?.bouncer.stop();
    await context.db?.drop();
  });
  return context;
}
