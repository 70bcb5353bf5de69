import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aQuantity, uniqueSku, type Json } from '../support/builders.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { runCommand, useImportCommand, type CommandOutcome } from '../support/command.js';
import { bearer } from '../support/tokens.js';
import { rowCounts } from './product-api.js';

/** `npm run import` as the image runs it: compiled JS under dist/, plain node, against the real app over HTTP. */
const IMPORT_CLI = path.join(PROJECT_ROOT, 'dist', 'products', 'import-cli.js');

const ctx = useTestApp();
const command = useImportCommand(() => ctx.app);
const givenFile = command.givenFile;

function runImport(args: readonly string[], environment: Record<string, string> = {}): Promise<CommandOutcome> {
  return runCommand([IMPORT_CLI, ...args], environment);
}

async function stored(sku: string): Promise<Json> {
  const { rows } = await ctx.db.pool.query<Json>(
    `SELECT sku, label, description, base_unit_magnitude::text AS magnitude, base_unit_code AS code, stock_zone AS
            "stockZone", overbooking_allowed AS "overbookingAllowed", details::text AS details
       FROM product WHERE sku = $1`,
    [sku],
  );
  return rows[0]!;
}

const token = (): string => bearer().slice('Bearer '.length);

/** D38: the command prints the Idempotency-Key it sends first, on stderr. */
const KEY_LINE = /^Idempotency-Key: [0-9a-f]{64}\n/;
const withoutKey = (stderr: string): string => stderr.replace(KEY_LINE, '');

describe('node dist/products/import-cli.js (npm run import)', () => {
  it('streams an NDJSON file to the service, reports the rows on stderr and exits 0', async () => {
    const products = [aProduct({ label: 'one' }), aProduct(), aProduct({ baseUnit: aQuantity(2.5, 'KG') })];
    const file = await givenFile('three.ndjson', products.map((product) => `${JSON.stringify(product)}\n`).join(''));

    const outcome = await runImport(['--url', command.url, file], { TOKEN: token() });

    expect(outcome.stdout).toMatch(
      /^Imported 3 Products in \d+\.\d s \([\d,]+\/s\): 3 created, 0 skipped, 0 updated\n$/,
    );
    expect(outcome).toMatchObject({ code: 0, stderr: expect.stringMatching(KEY_LINE) as unknown });
    expect(await stored(products[2]!.sku)).toMatchObject({ magnitude: '2.5', code: 'KG', label: null });
    expect(await stored(products[0]!.sku)).toMatchObject({ label: 'one' });
  });

  it('converts a CSV file with a header row to Products while streaming, quoted fields and all', async () => {
    const [first, second] = [uniqueSku('CSV'), uniqueSku('CSV')];
    const file = await givenFile(
      'products.csv',
      'sku,baseUnitMagnitude,baseUnitCode,description,stockZone,overbookingAllowed,details,label\r\n' +
        `${first},12.000001,KG,"comma, ""quotes""\nand a line break",B,true,"{""erp"": 7}",\r\n` +
        `\n${second},1,PC,,,,,second\n`,
    );

    const outcome = await runImport(['--url', command.url, '--token', token(), file]);

    expect(outcome.stdout).toMatch(/^Imported 2 Products in /);
    expect(outcome.code).toBe(0);
    expect(await stored(first)).toEqual({
      sku: first,
      label: null,
      description: 'comma, "quotes"\nand a line break',
      magnitude: '12.000001',
      code: 'KG',
      stockZone: 'B',
      overbookingAllowed: true,
      details: '{"erp":7}',
    });
    expect(await stored(second)).toMatchObject({ label: 'second', magnitude: '1', code: 'PC', stockZone: null });
  });

  it('stores a CSV file once when the same command runs again, and says the second answer was a replay', async () => {
    const [first, second] = [uniqueSku('TWICE'), uniqueSku('TWICE')];
    const file = await givenFile(
      'twice.csv',
      `sku,baseUnitMagnitude,baseUnitCode,label\n${first},1,PC,first\n${second},2,PC,second\n`,
    );
    const before = await rowCounts(ctx.db.pool);

    const once = await runImport(['--url', command.url, '--token', token(), file]);
    const again = await runImport(['--url', command.url, '--token', token(), file]);

    expect(once).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Imported 2 Products in .*: 2 created/) });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /^An earlier run with this Idempotency-Key stored the file; nothing was stored again:\nImported 2 Products in .*: 2 created, 0 skipped, 0 updated\n$/,
    );
    expect(again.stderr.match(KEY_LINE)?.[0]).toBe(once.stderr.match(KEY_LINE)?.[0]);
    expect((await rowCounts(ctx.db.pool)).products).toBe(before.products + 2);
    expect(await stored(second)).toMatchObject({ label: 'second', magnitude: '2' });
  });

  it("exits 1 with the service's error naming the line when it refuses the import, and nothing is stored", async () => {
    const before = await rowCounts(ctx.db.pool);
    const file = await givenFile(
      'invalid.csv',
      `sku,baseUnitMagnitude,baseUnitCode,stockZone\n${uniqueSku()},1,PC,A\n${uniqueSku()},1,PC,Z\n`,
    );

    const outcome = await runImport(['--url', command.url, file], { TOKEN: token() });

    expect(outcome.code).toBe(1);
    expect(withoutKey(outcome.stderr)).toBe(
      'Import refused, nothing stored: HTTP 400 Bad Request: line 2: stockZone: Invalid option: expected one of ' +
        '"A"|"B"|"C"\n',
    );
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('runs again with --on-conflict skip or update: nothing created, only the changed Product updated', async () => {
    const [kept, changed] = [uniqueSku('RERUN'), uniqueSku('RERUN')];
    const csv = (label: string): string =>
      `sku,baseUnitMagnitude,baseUnitCode,label\n${kept},1,PC,same\n${changed},1,PC,${label}\n`;
    const file = await givenFile('rerun.csv', csv('before'));
    expect((await runImport(['--url', command.url, file], { TOKEN: token() })).code).toBe(0);

    const skipped = await runImport(['--url', command.url, '--on-conflict', 'skip', file], { TOKEN: token() });
    await writeFile(file, csv('after'));
    const updated = await runImport(['--url', command.url, '--on-conflict', 'update', file], { TOKEN: token() });

    expect(skipped.stdout).toMatch(/^Imported 2 Products in .*: 0 created, 2 skipped, 0 updated\n$/);
    expect(skipped.code).toBe(0);
    expect(updated.stdout).toMatch(/^Imported 2 Products in .*: 0 created, 1 skipped, 1 updated\n$/);
    expect(updated.code).toBe(0);
    expect(await stored(changed)).toMatchObject({ label: 'after' });
    expect(await stored(kept)).toMatchObject({ label: 'same' });
  });

  it('refuses an unknown --on-conflict with exit code 2 before anything is sent', async () => {
    const outcome = await runImport(['--on-conflict', 'merge', 'file.ndjson'], { TOKEN: 'x' });

    expect(outcome.code).toBe(2);
    expect(outcome.stderr.startsWith("Unknown --on-conflict 'merge'.\n\nUsage:")).toBe(true);
  });

  it('refuses an unknown option with exit code 2 naming it, as the token command does', async () => {
    const outcome = await runImport(['--dry-run', 'file.ndjson'], { TOKEN: 'x' });

    expect(outcome.code).toBe(2);
    expect(outcome.stderr.startsWith("Unknown option '--dry-run'.\n\nUsage:")).toBe(true);
  });

  it('exits 1 naming the column when a CSV header has a column that is no Product field', async () => {
    const file = await givenFile('unknown.csv', 'sku,baseUnitMagnitude,baseUnitCode,colour\nA,1,PC,red\n');

    const outcome = await runImport(['--url', command.url, file], { TOKEN: token() });

    expect(outcome.code).toBe(1);
    expect(withoutKey(outcome.stderr)).toMatch(
      /^Import failed after 0 rows: unknown CSV column colour; the columns are sku, /,
    );
  });

  it('exits 1 saying so when the service cannot be reached', async () => {
    const file = await givenFile('one.ndjson', `${JSON.stringify(aProduct())}\n`);

    const outcome = await runImport(['--url', 'http://127.0.0.1:1', file], { TOKEN: token() });

    expect(outcome.code).toBe(1);
    expect(withoutKey(outcome.stderr)).toMatch(/^Import failed after \d+ rows: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });

  it('prints its usage with --help and exits 0; without a token or a file it exits 2', async () => {
    const help = await runImport(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith('Usage: node dist/products/import-cli.js [--url URL]')).toBe(true);

    const noToken = await runImport(['file.ndjson']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr.startsWith('No token: pass --token or set TOKEN.\n\nUsage:')).toBe(true);

    const noFile = await runImport([], { TOKEN: 'x' });
    expect(noFile.code).toBe(2);
    expect(noFile.stderr.startsWith('Which file? FILE is missing.\n')).toBe(true);
  });
});
