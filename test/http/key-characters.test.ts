import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { uniqueSku } from '../support/builders.js';
import { call, givenLocation, pc, postUnitsOfNewProduct, unique } from '../support/stock-api.js';
import { storedUnitsOf } from '../support/stock.js';

/**
 * Issue 28: a key with an invisible or bidirectional character looks like another key (`A\u202eB\u200b` shows as a
 * reversed `AB`): two "equal" SKUs, a label a scanner never matches. Keys refuse control, format (zero-width,
 * bidirectional marks, overrides and isolates, soft hyphen, BOM) and line/paragraph separator characters.
 */
const ctx = useTestApp();
const HIDDEN = 'must not contain control, invisible or bidirectional formatting characters';

/** Each a character that shows as nothing, or reorders what follows it. */
const HIDDEN_CHARACTERS = {
  'right-to-left override': '\u202e',
  'zero-width space': '\u200b',
  'left-to-right isolate': '\u2066',
  'right-to-left mark': '\u200f',
  'byte order mark': '\ufeff',
  'soft hyphen': '\u00ad',
  tab: '\t',
  'line feed': '\n',
  'unit separator': '\u001f',
  DEL: '\u007f',
  'C1 control NEL': '\u0085',
  'line separator': '\u2028',
};

describe.each(Object.entries(HIDDEN_CHARACTERS))('a key with a %s', (_name, character) => {
  it('is refused as a SKU with 400 naming the field, and no Product is stored', async () => {
    const sku = `${uniqueSku('HID')}${character}B`;
    const response = await call(ctx, 'post', '/v1/products').send([{ sku, baseUnit: pc(1) }]);
    expectValidationError(response, [['[0].sku', HIDDEN]]);
    const { rowCount } = await ctx.db.pool.query('SELECT 1 FROM product WHERE sku = $1', [sku]);
    expect(rowCount).toBe(0);
  });

  it('is refused as a locationId and as an erpCode, and no Location is stored', async () => {
    const locationId = `${unique('LOC')}${character}`;
    const response = await call(ctx, 'put', '/v1/locations').send([{ locationId, erpCode: `ERP${character}1` }]);
    expectValidationError(response, [
      ['[0].locationId', HIDDEN],
      ['[0].erpCode', HIDDEN],
    ]);
    const { rowCount } = await ctx.db.pool.query('SELECT 1 FROM location WHERE location_id = $1', [locationId]);
    expect(rowCount).toBe(0);
  });

  it('is refused as a transportUnitBK, and no TransportUnit is stored', async () => {
    const location = await givenLocation(ctx);
    const transportUnitBK = `${unique('TU')}${character}`;
    const response = await call(ctx, 'post', '/v1/transport-units').send({
      transportUnitBK,
      transportUnitType: 'PALLET',
      actualLocation: { locationId: location.locationId },
    });
    expectValidationError(response, [['transportUnitBK', HIDDEN]]);
    const { rowCount } = await ctx.db.pool.query('SELECT 1 FROM transport_unit WHERE bk = $1', [transportUnitBK]);
    expect(rowCount).toBe(0);
  });

  it('is refused as a label of a PackagingUnit, and no unit is stored', async () => {
    const { sku, response } = await postUnitsOfNewProduct(ctx, [
      { quantity: pc(1), labels: ['FINE', `LABEL${character}`] },
    ]);
    expectValidationError(response, [['[0].labels[1]', HIDDEN]]);
    expect(await storedUnitsOf(ctx.db.pool, sku)).toEqual([]);
  });
});

describe('keys in other scripts', () => {
  it('accepts letters of any script, accents and emoji without joiners', async () => {
    for (const sku of ['ÄÖÜ-ß', 'مفتاح-1', 'キー', '键-42', 'A📦B']) {
      const response = await call(ctx, 'post', '/v1/products').send([
        { sku: `${sku}-${unique('S')}`, baseUnit: pc(1) },
      ]);
      expect(response.status).toBe(201);
    }
  });
});
