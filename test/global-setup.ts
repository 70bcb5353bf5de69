import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { withDatabase } from './support/database-url.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/**
 * One PostgreSQL per test run: TEST_DATABASE_URL's server, or an embedded one in a temporary folder.
 * A template database is migrated once; every test file clones it (test/support/database.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' });
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-test-'));
    embedded = await startEmbeddedPostgres({ dataDir, port: 0, logger });
    adminUrl = embedded.url;
  }
  const templateDatabase = `inventory_template_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  const templatePool = new pg.Pool({ connectionString: withDatabase(adminUrl, templateDatabase), max: 1 });
  await migrate(templatePool, logger);
  await templatePool.end();
  await admin.end();

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);

  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    const clones = await cleanup.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [templateDatabase, `${templateDatabase}_%`],
    );
    for (const { datname } of clones.rows) {
      await cleanup.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await cleanup.end();
    await embedded?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
