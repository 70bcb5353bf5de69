import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectValidationError } from '../support/api-errors.js';
import { pc, postUnitsOfNewProduct } from '../support/stock-api.js';
import { storedUnitsOf } from '../support/stock.js';

/**
 * Issue 28: a 900 KB timestamp string cost far more CPU to refuse than any other 900 KB field. The longest ISO 8601
 * datetime the service reads (`2030-05-01T12:30:15.123456789+02:00`) has 35 characters: a longer string is refused
 * by its length, before it is parsed.
 */
const ctx = useTestApp();
const TOO_LONG = 'must be an ISO 8601 datetime with an offset, at most 35 characters';

const createWithExpiresAt = (expiresAt: string): ReturnType<typeof postUnitsOfNewProduct> =>
  postUnitsOfNewProduct(ctx, [{ quantity: pc(1), expiresAt }]);

describe('expiresAt by its length', () => {
  it('accepts the longest form, with nanoseconds and an offset with a colon', async () => {
    const { response } = await createWithExpiresAt('2030-05-01T12:30:15.123456789+02:00');
    expect(response.status).toBe(201);
  });

  it.each([
    ['one character too many', '2030-05-01T12:30:15.1234567890+02:00'],
    ['900 KB of digits in the fraction', `2030-05-01T12:30:15.${'1'.repeat(900_000)}Z`],
    ['900 KB of repeated dates', '2030-05-01'.repeat(90_000)],
  ])('refuses %s by its length with 400, storing nothing', async (_what, expiresAt) => {
    const { sku, response } = await createWithExpiresAt(expiresAt);
    expectValidationError(response, [['[0].expiresAt', TOO_LONG]]);
    expect(await storedUnitsOf(ctx.db.pool, sku)).toEqual([]);
  });

  it('still refuses a short string that is no datetime for what it is', async () => {
    const { response } = await createWithExpiresAt('2030-05-01');
    expectValidationError(response, [['[0].expiresAt', 'must be an ISO 8601 datetime with an offset']]);
  });
});
