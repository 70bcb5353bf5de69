import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aQuantity, type Json } from '../support/builders.js';
import { runCommand, useImportCommand, type CommandOutcome } from '../support/command.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { givenLocation, givenProduct, uniqueKey } from '../support/stock.js';
import { bearer } from '../support/tokens.js';

/** `npm run import -- --packaging-units FILE` as the image runs it: compiled JS, against the real app over HTTP. */
const IMPORT_CLI = path.join(PROJECT_ROOT, 'dist', 'products', 'import-cli.js');

const ctx = useTestApp();
const command = useImportCommand(() => ctx.app);

const token = (): string => bearer().slice('Bearer '.length);

/** D38: the command prints the Idempotency-Key it sends first, on stderr. */
const KEY_LINE = /^Idempotency-Key: [0-9a-f]{64}\n/;
const withoutKey = (stderr: string): string => stderr.replace(KEY_LINE, '');

async function runIntake(name: string, text: string, args: readonly string[] = []): Promise<CommandOutcome> {
  const file = await command.givenFile(name, text);
  return runCommand([IMPORT_CLI, '--url', command.url, '--packaging-units', ...args, file], { TOKEN: token() });
}

async function storedUnits(sku: string): Promise<Json[]> {
  const { rows } = await ctx.db.pool.query<Json>(
    `SELECT pu.qty_magnitude::text AS qty, pu.qty_code AS code, tu.bk, lu.physical_position AS "luPos",
            lu.load_unit_type AS "loadUnitType", l.location_id AS "locationId", pu.serial_number AS "serialNumber",
            pu.expires_at AS "expiresAt", pu.labels, pu.weight_magnitude::text AS weight, pu.weight_code AS "weightCode",
            pu.details
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
            LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
            LEFT JOIN location l ON l.id = pu.location_id
      WHERE p.sku = $1 ORDER BY pu.id`,
    [sku],
  );
  return rows;
}

describe('node dist/products/import-cli.js --packaging-units (npm run import)', () => {
  it('streams an NDJSON file of units to the stock intake and reports how many it took in', async () => {
    const sku = (await givenProduct(ctx)).sku;
    const bk = uniqueKey('TU');
    const lines = [1, 2].map((magnitude) => ({
      transportUnitBK: bk,
      luPos: '1',
      loadUnitType: 'BOX',
      product: { sku },
      quantity: aQuantity(magnitude),
    }));

    const outcome = await runIntake('units.ndjson', lines.map((line) => `${JSON.stringify(line)}\n`).join(''));

    expect(outcome.stdout).toMatch(/^Took in 2 PackagingUnits in \d+\.\d s \([\d,]+\/s\)\n$/);
    expect(outcome).toMatchObject({ code: 0, stderr: expect.stringMatching(KEY_LINE) as unknown });
    expect((await storedUnits(sku)).map((unit) => [unit.qty, unit.bk, unit.luPos])).toEqual([
      ['1', bk, '1'],
      ['2', bk, '1'],
    ]);
  });

  it('converts a CSV of units, into LoadUnits and onto Locations, with their optional fields', async () => {
    const piece = (await givenProduct(ctx)).sku;
    const weight = (await givenProduct(ctx, { baseUnit: aQuantity(1, 'KG') })).sku;
    const bk = uniqueKey('TU');
    const { locationId } = await givenLocation(ctx);

    const outcome = await runIntake(
      'units.csv',
      'sku,quantityMagnitude,quantityCode,transportUnitBK,luPos,loadUnitType,locationId,serialNumber,expiresAt,' +
        'labels,weightMagnitude,weightCode,details\r\n' +
        `${piece},2,DOZ,${bk},1,PALLET,,S-1,2031-05-01T10:00:00Z,"[""a"",""b""]",0.5,KG,"{""lot"": 7}"\r\n` +
        `${weight},1.25,KG,,,,${locationId},,,,,,\r\n`,
    );

    expect(outcome).toMatchObject({ code: 0, stderr: expect.stringMatching(KEY_LINE) as unknown });
    expect(outcome.stdout).toMatch(/^Took in 2 PackagingUnits in /);
    expect(await storedUnits(piece)).toEqual([
      {
        qty: '2',
        code: 'DOZ',
        bk,
        luPos: '1',
        loadUnitType: 'PALLET',
        locationId: null,
        serialNumber: 'S-1',
        expiresAt: new Date('2031-05-01T10:00:00Z'),
        labels: ['a', 'b'],
        weight: '0.5',
        weightCode: 'KG',
        details: { lot: 7 },
      },
    ]);
    expect(await storedUnits(weight)).toMatchObject([{ qty: '1.25', code: 'KG', bk: null, locationId }]);
  });

  it("exits 1 with the service's error naming the record's line when it refuses the intake, and nothing is stored", async () => {
    const sku = (await givenProduct(ctx)).sku;
    const { locationId } = await givenLocation(ctx);

    const outcome = await runIntake(
      'invalid.csv',
      `sku,quantityMagnitude,quantityCode,locationId\n${sku},1,PC,${locationId}\n${sku},-1,PC,${locationId}\n`,
    );

    expect(outcome).toMatchObject({ code: 1, stdout: '' });
    expect(withoutKey(outcome.stderr)).toBe(
      'Import refused, nothing stored: HTTP 400 Bad Request: line 2: quantity.magnitude: must be greater than 0\n',
    );
    expect(await storedUnits(sku)).toEqual([]);
  });

  it('refuses --on-conflict with --packaging-units with exit code 2 before anything is sent', async () => {
    const outcome = await runIntake('any.ndjson', '', ['--on-conflict', 'skip']);

    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^--on-conflict applies to Products, not to --packaging-units\./);
  });
});
