import { describe, expect, it } from 'vitest';
import { expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, uniqueSku, type Json } from '../support/builders.js';
import { call, givenLocation, givenProduct, givenTransportUnitOn, givenUnitsIn, unique } from '../support/stock-api.js';

/**
 * Issue 15: free-form `details` are at most 64 KiB as stored (their JSON text in UTF-8), free text (descriptions,
 * a problem's messageText) at most 4,000 characters. Beyond, a 400 names the field, and nothing is stored.
 */
const ctx = useTestApp();

const MAX_DETAILS_BYTES = 65_536;
const MAX_TEXT = 4_000;
const DETAILS_TOO_LARGE = `must not take more than ${MAX_DETAILS_BYTES} bytes as JSON`;
const TEXT_TOO_LONG = `Too big: expected string to have <=${MAX_TEXT} characters`;

/** Details whose JSON text takes exactly `bytes` bytes, most of them in three-byte characters (fewer characters). */
function detailsOfBytes(bytes: number): Json {
  const frame = Buffer.byteLength('{"note":""}');
  const euros = Math.floor((bytes - frame) / 3);
  const details = { note: '€'.repeat(euros) + 'x'.repeat(bytes - frame - euros * 3) };
  expect(Buffer.byteLength(JSON.stringify(details))).toBe(bytes);
  return details;
}

async function storedDetailsBytes(sku: string): Promise<number | undefined> {
  const result = await ctx.db.pool.query<{ bytes: number }>(
    'SELECT octet_length(details::text) AS bytes FROM product WHERE sku = $1',
    [sku],
  );
  return result.rows[0]?.bytes;
}

async function productCount(sku: string): Promise<number> {
  const result = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku = $1', [sku]);
  return result.rows[0]!.n;
}

const createProducts = (body: unknown) => call(ctx, 'post', '/v1/products').send(body as object);

describe('Product details: at most 64 KiB as JSON', () => {
  it('stores details of exactly 65,536 bytes as sent', async () => {
    const sku = uniqueSku('DETAILS-MAX');
    const details = detailsOfBytes(MAX_DETAILS_BYTES);

    expect((await createProducts([aProduct({ sku, details })])).status).toBe(201);
    expect(await storedDetailsBytes(sku)).toBe(MAX_DETAILS_BYTES);
    const read = await call(ctx, 'get', `/v1/products?sku=${sku}`);
    expect(read.body.details).toEqual(details);
  });

  it.each<[string, (sku: string) => unknown, string]>([
    ['a Product in an array', (sku) => [aProduct({ sku, details: detailsOfBytes(65_537) })], '[0].details'],
    ['a single Product', (sku) => aProduct({ sku, details: detailsOfBytes(65_537) }), 'details'],
    [
      "a Product's unit",
      (sku) => [aProduct({ sku, units: [aProductUnit({ details: detailsOfBytes(65_537) })] })],
      '[0].units[0].details',
    ],
  ])('refuses one byte more in %s with 400 naming the field, and stores nothing', async (_what, body, path) => {
    const sku = uniqueSku('DETAILS-OVER');

    expectValidationError(await createProducts(body(sku)), [[path, DETAILS_TOO_LARGE]]);
    expect(await productCount(sku)).toBe(0);
  });

  it('refuses a replacement whose details are one byte over, and keeps the Product as it was', async () => {
    const sku = uniqueSku('DETAILS-PUT');
    const created = await createProducts([aProduct({ sku, details: { before: true } })]);
    const pKey = String(created.headers.location).split('/').pop();

    const response = await call(ctx, 'put', '/v1/products').send(
      aProduct({ sku, pKey, details: detailsOfBytes(65_537) }),
    );

    expectValidationError(response, [['details', DETAILS_TOO_LARGE]]);
    expect(await storedDetailsBytes(sku)).toBe(Buffer.byteLength('{"before":true}'));
  });
});

describe('descriptions: at most 4,000 characters', () => {
  it('stores a Product and unit description of exactly 4,000 characters', async () => {
    const sku = uniqueSku('TEXT-MAX');
    const description = 'é'.repeat(MAX_TEXT);

    const response = await createProducts([aProduct({ sku, description, units: [aProductUnit({ description })] })]);

    expect(response.status).toBe(201);
    const read = await call(ctx, 'get', `/v1/products?sku=${sku}`);
    expect([read.body.description, read.body.units[0].description]).toEqual([description, description]);
  });

  it('refuses one character more in a Product and in its unit with 400 naming both, and stores nothing', async () => {
    const sku = uniqueSku('TEXT-OVER');
    const description = 'é'.repeat(MAX_TEXT + 1);

    const response = await createProducts([aProduct({ sku, description, units: [aProductUnit({ description })] })]);

    expectValidationError(response, [
      ['[0].description', TEXT_TOO_LONG],
      ['[0].units[0].description', TEXT_TOO_LONG],
    ]);
    expect(await productCount(sku)).toBe(0);
  });

  it('refuses a Location description one character over, and stores no Location', async () => {
    const locationId = unique('LOC-TEXT');

    const response = await call(ctx, 'put', '/v1/locations').send([
      { locationId, description: 'x'.repeat(MAX_TEXT + 1) },
    ]);

    expectValidationError(response, [['[0].description', TEXT_TOO_LONG]]);
    const stored = await ctx.db.pool.query('SELECT 1 FROM location WHERE location_id = $1', [locationId]);
    expect(stored.rowCount).toBe(0);
  });
});

describe('PackagingUnits: details and the problem messageText', () => {
  it('refuses a unit whose details are one byte over 64 KiB with 400 naming the field, and creates no unit', async () => {
    const sku = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);

    const response = await call(ctx, 'post', '/v1/packaging-units').send({
      product: { sku },
      quantity: aQuantity(1),
      actualLocation: { locationId },
      details: detailsOfBytes(65_537),
    });

    expectValidationError(response, [['details', DETAILS_TOO_LARGE]]);
    expect((await call(ctx, 'get', `/v1/packaging-units?sku=${sku}`)).body).toEqual([]);
  });

  it('refuses a problem report whose messageText is one character over 4,000, and locks nothing', async () => {
    const sku = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const bk = await givenTransportUnitOn(ctx, locationId);
    await givenUnitsIn(ctx, bk, '1', sku, [{ quantity: aQuantity(5) }]);

    const response = await call(ctx, 'post', `/v1/transport-units/${bk}/load-units/1/packaging-units/failures`).send({
      messageNo: 'QC-1',
      messageText: 'x'.repeat(MAX_TEXT + 1),
      product: { sku },
      quantity: aQuantity(1),
    });

    expectValidationError(response, [['messageText', TEXT_TOO_LONG]]);
    const locked = await ctx.db.pool.query(
      "SELECT 1 FROM packaging_unit WHERE state = 'LOCKED' AND message_no = 'QC-1'",
    );
    expect(locked.rowCount).toBe(0);
  });
});
