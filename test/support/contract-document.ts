import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pino } from 'pino';
import prettier from 'prettier';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startEvents } from '../../src/events/runtime.js';
import { TEST_SECRET } from './tokens.js';

/** The committed copy of the served document, for tools that read a file (`npm run openapi` writes it). */
export const OPENAPI_FILE = fileURLToPath(new URL('../../openapi.json', import.meta.url));

/**
 * The OpenAPI document the service serves (GET /v3/api-docs). Serving it needs no database, so the pool here never
 * connects: the fuzzing must know the operations when vitest collects its tests, before any database exists.
 */
export async function servedApiDocument(): Promise<unknown> {
  const config = loadConfig({ NODE_ENV: 'test', AUTH_JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'silent' });
  const pool = new pg.Pool({ connectionString: 'postgres://unused@127.0.0.1:9/unused' });
  const logger = pino({ level: 'silent' });
  const events = startEvents(pool, config, logger);
  try {
    const response = await request(createApp({ config, pool, logger, events })).get('/v3/api-docs');
    if (response.status !== 200) throw new Error(`GET /v3/api-docs answered ${response.status}`);
    return response.body as unknown;
  } finally {
    await events.stop();
    await pool.end();
  }
}

/** The document as the committed file holds it: formatted as `npm run lint` (prettier) wants every JSON file. */
export async function apiDocumentText(document: unknown): Promise<string> {
  const options = await prettier.resolveConfig(OPENAPI_FILE);
  return prettier.format(JSON.stringify(document), { ...options, filepath: path.basename(OPENAPI_FILE) });
}
