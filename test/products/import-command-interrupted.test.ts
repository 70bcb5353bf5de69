import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku } from '../support/builders.js';
import { runCommandInterrupted, useImportCommand, type CommandOutcome } from '../support/command.js';
import { waitFor } from '../support/pg-activity.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 2: `npm run import` under Ctrl-C (SIGINT to the child process), while it uploads and while the
 * service stores what it sent: the service rolls the import back and the command, having asked the service,
 * says so and exits 130.
 */
const IMPORT_CLI = path.join(PROJECT_ROOT, 'dist', 'products', 'import-cli.js');
const PRODUCTS = 60_000;

const ctx = useTestApp();
const command = useImportCommand(() => ctx.app);

/** Starts the command on `file`; interrupts it once the database shows `phase`; answers how it ended. */
async function interruptWhen(file: string, phase: () => Promise<boolean>): Promise<CommandOutcome> {
  return runCommandInterrupted(
    [IMPORT_CLI, '--url', command.url, file],
    { TOKEN: bearer().slice('Bearer '.length) },
    () => waitFor('the phase to interrupt in', async () => ((await phase()) ? true : undefined), 60_000),
  );
}

async function activeImportStatements(): Promise<string[]> {
  const { rows } = await ctx.db.pool.query<{ query: string }>(
    `SELECT query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
  );
  return rows.map((row) => row.query);
}

async function givenProductsFile(prefix: string): Promise<string> {
  const text = Array.from(
    { length: PRODUCTS },
    (_, index) => `${JSON.stringify(aProduct({ sku: `${prefix}-${index}` }))}\n`,
  ).join('');
  return command.givenFile(`${prefix}.ndjson`, text);
}

async function stored(prefix: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku LIKE $1', [
    `${prefix}-%`,
  ]);
  return rows[0]!.n;
}

describe('npm run import interrupted by Ctrl-C (D38)', () => {
  it('says "cancelled, nothing stored" when interrupted during the upload, and nothing is stored', async () => {
    const prefix = uniqueSku('SIGINT-UP');
    const file = await givenProductsFile(prefix);

    const outcome = await interruptWhen(file, async () =>
      (await activeImportStatements()).some((query) => query.startsWith('COPY product_import')),
    );

    expect(outcome.code).toBe(130);
    expect(outcome.stderr).toMatch(/^Idempotency-Key: [0-9a-f]{64}\n/);
    expect(outcome.stderr).toMatch(/Interrupted: cancelled, nothing stored\n$/);
    expect(outcome.stdout).toBe('');
    expect(await stored(prefix)).toBe(0);
  }, 120_000);

  it('says "cancelled, nothing stored" when interrupted while the service stores the upload', async () => {
    const prefix = uniqueSku('SIGINT-STORE');
    const file = await givenProductsFile(prefix);

    const outcome = await interruptWhen(file, async () =>
      (await activeImportStatements()).some((query) => query.includes('product_import') && !query.startsWith('COPY')),
    );

    expect(outcome.code).toBe(130);
    expect(outcome.stderr).toMatch(/Interrupted: cancelled, nothing stored\n$/);
    expect(outcome.stdout).toBe('');
    expect(await stored(prefix)).toBe(0);
  }, 120_000);
});
