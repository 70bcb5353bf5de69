import { describe, expect, it } from 'vitest';
import { expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { givenProduct, stockApi, uniqueKey } from '../support/stock.js';

/**
 * Issue 39: every bulk JSON body is read item by item as it arrives, and refused as soon as it is known to be: at
 * the first item over the operation's limit, or at its 100th problem. The answers name what the client sent, in
 * the form it sent it (`[3].`, `packagingUnits[3].`, or no prefix for one object).
 */
const ctx = useTestApp();
const api = stockApi(ctx);
const loadUnitPath = (bk: string): string => `/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=P`;

async function count(sql: string, values: unknown[]): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: string }>(sql, values);
  return Number(rows[0]!.n);
}

describe('bulk JSON bodies read as they arrive (issue 39)', () => {
  it('refuses 10,001 units on Locations at the last one: 400 naming the body, nothing stored', async () => {
    const product = await givenProduct(ctx);
    const unit = { product: { sku: product.sku }, quantity: aQuantity(1), actualLocation: { locationId: 'NOWHERE' } };

    const response = await api.post('/v1/packaging-units', Array(10_001).fill(unit));

    expectValidationError(response, [['body', 'Too big: expected array to have <=10000 items']]);
    expect(await count('SELECT count(*) AS n FROM packaging_unit WHERE product_id = $1', [product.id])).toBe(0);
  });

  it('refuses 10,001 units in a LoadUnit sent as {packagingUnits}, naming packagingUnits', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');

    const response = await api.post(loadUnitPath(bk), {
      packagingUnits: Array(10_001).fill({ product: { sku: product.sku }, quantity: aQuantity(1) }),
    });

    expectValidationError(response, [['packagingUnits', 'Too big: expected array to have <=10000 items']]);
    expect(await count('SELECT count(*) AS n FROM transport_unit WHERE bk = $1', [bk])).toBe(0);
  });

  it('names the first 100 problems of a list of 150 bad LocationGroups among 300 and stores none', async () => {
    const prefix = uniqueKey('LG');
    const groups = Array.from({ length: 300 }, (_, index) => ({ name: index % 2 ? `${prefix}-${index}` : 7 }));

    const response = await api.put('/v1/location-groups', groups);

    const named = Array.from({ length: 100 }, (_, index) => index * 2).map(
      (index) => [`[${index}].name`, 'must be of type string'] as const,
    );
    expectValidationError(response, named);
    expect(await count('SELECT count(*) AS n FROM location_group WHERE name LIKE $1', [`${prefix}-%`])).toBe(0);
  });

  it('answers a {packagingUnits} body without a list as its schema does', async () => {
    const bk = uniqueKey('TU');
    expectValidationError(await api.post(loadUnitPath(bk), { packagingUnits: 5 }), [
      ['packagingUnits', 'must be of type array'],
    ]);
    expectValidationError(await api.post(loadUnitPath(bk), { other: [1] }), [['packagingUnits', 'required']]);
    expectValidationError(await api.post(loadUnitPath(bk), { packagingUnits: [] }), [
      ['packagingUnits', 'Too small: expected array to have >=1 items'],
    ]);
    expectValidationError(await api.post(loadUnitPath(bk), []), [
      ['body', 'Too small: expected array to have >=1 items'],
    ]);
    expectValidationError(
      await api.post(loadUnitPath(bk), { packagingUnits: [{ product: { sku: 'X' } }], note: 'ignored' }),
      [['packagingUnits[0].quantity', 'required']],
    );
  });

  it('answers one unit on a Location with the paths of the object, and a list of other things as a list', async () => {
    expectValidationError(await api.post('/v1/packaging-units', { product: { sku: 'X' } }), [
      ['quantity', 'required'],
      ['actualLocation', 'required'],
    ]);
    expectValidationError(await api.put('/v1/packaging-units/move-between-locations', { product: { sku: 'X' } }), [
      ['body', 'must be of type array'],
    ]);
  });

  it('refuses a member beside packagingUnits larger than BODY_LIMIT with 413 naming it', async () => {
    const response = await api.post(loadUnitPath(uniqueKey('TU')), {
      note: 'x'.repeat(1024 * 1024 + 1),
      packagingUnits: [],
    });

    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({
      status: 413,
      exception: 'PayloadTooLargeException',
      message: 'Request body member "note" exceeds the limit of one resource, 1mb',
    });
  });
});
