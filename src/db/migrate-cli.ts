import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './database.js';
import { migrate } from './migrate.js';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database) and exits. */
const config = loadConfig();
const logger = createLogger(config);
const database = await openDatabase(config, logger);
try {
  const applied = await migrate(database.pool, logger);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'schema is up to date');
} finally {
  await database.close();
}
