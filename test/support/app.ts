import type { Express } from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startEvents, type EventsRuntime } from '../../src/events/runtime.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { TEST_SECRET } from './tokens.js';

export interface TestContext {
  app: Express;
  db: TestDatabase;
  config: Config;
  events: EventsRuntime;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', AUTH_JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'silent', ...overrides });
}

/**
 * Registers hooks that give the file its own database and the real application on it.
 * The returned object is filled in by beforeAll.
 */
export function useTestApp(environment: Record<string, string> = {}): TestContext {
  const context = {} as TestContext;
  beforeAll(async () => {
    context.db = await createTestDatabase();
    context.config = testConfig(environment);
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    context.events = startEvents(context.db.pool, context.config, logger);
    context.app = createApp({ config: context.config, pool: context.db.pool, logger, events: context.events });
  });
  afterAll(async () => {
    await context.events?.stop();
    await context.db?.drop();
  });
  return context;
}
