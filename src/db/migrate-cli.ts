import { loadConfigOrExit, parseCommandLine } from '../command-line.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './database.js';
import { migrate } from './migrate.js';

const USAGE = `Usage: node dist/db/migrate-cli.js
       npm run migrate

Applies the pending migrations (migrations/*.sql) to DATABASE_DIRECT_URL (default: DATABASE_URL) and exits; the
service applies them at every start as well. Without DATABASE_URL (development, or EMBEDDED_POSTGRES=true) it
migrates the embedded PostgreSQL under DATA_DIR.
`;

/** `npm run migrate`: applies pending migrations and exits 0, or exits 1 when a setting or a migration fails. */
parseCommandLine(process.argv.slice(2), USAGE, 0);
const config = loadConfigOrExit();
const logger = createLogger(config);
const database = await openDatabase(config, logger);
try {
  const applied = await migrate(database.sessionPool, logger);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'schema is up to date');
} finally {
  await database.close();
}
