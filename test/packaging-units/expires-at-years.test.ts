import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { call, givenLocation, givenProduct, givenTransportUnitOn, givenUnitsIn, pc } from '../support/stock-api.js';
import { storedUnitsOf } from '../support/stock.js';

/** Issue 15: years 0001–0099 were read as 1901–1999; years outside 0001–9999 are refused, not shifted. */
const ctx = useTestApp();

async function aLoadUnit(): Promise<string> {
  const location = await givenLocation(ctx.app);
  return givenTransportUnitOn(ctx.app, location.locationId);
}

describe('expiresAt in an early or late year', () => {
  it.each([
    ['0099-06-15T00:00:00Z', '0099-06-15T00:00:00.000Z'],
    ['0001-01-01T01:00:00+01:00', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('stores %s as the instant %s and answers it so', async (sent, instant) => {
    const sku = await givenProduct(ctx.app);
    const [unit] = await givenUnitsIn(ctx.app, await aLoadUnit(), '1', sku, [{ quantity: pc(1), expiresAt: sent }]);

    const read = await call(ctx.app, 'get', `/v1/packaging-units/${unit!.pKey}`);

    expect(read.status).toBe(200);
    expect((read.body as { expiresAt: string }).expiresAt).toBe(instant);
  });

  it.each(['0000-06-15T00:00:00Z', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01'])(
    'refuses %s with 400 and stores nothing',
    async (sent) => {
      const sku = await givenProduct(ctx.app);
      const bk = await aLoadUnit();

      const response = await call(
        ctx.app,
        'post',
        `/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`,
      ).send([{ product: { sku }, quantity: pc(1), expiresAt: sent }]);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        messageKey: 'core.validation.error',
        message: '[0].expiresAt: must be an ISO 8601 datetime with an offset',
        obj: ['[0].expiresAt'],
      });
      expect(await storedUnitsOf(ctx.db.pool, sku)).toEqual([]);
    },
  );
});
