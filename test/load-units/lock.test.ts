import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import {
  BASE,
  givenDivided,
  givenProduct,
  HAL_JSON_UTF8,
  loadUnitsOf,
  patch,
  PIECE,
  put,
  TIMESTAMP,
  unique,
} from './load-unit-api.js';

const ctx = useTestApp();

async function aLoadUnit(): Promise<{ bk: string; pKey: string }> {
  const bk = unique('TU');
  await givenDivided(ctx.app, bk, 2, 'BOX');
  const [first] = await loadUnitsOf(ctx.db.pool, bk);
  return { bk, pKey: first!.pKey };
}

describe('PATCH /v1/load-units/{pKey} (lock for allocation, D16)', () => {
  it('locks the LoadUnit and answers 200 HAL with it, ol raised', async () => {
    const { bk, pKey } = await aLoadUnit();

    const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: true });

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      pKey,
      transportUnitBK: bk,
      physicalPosition: '1',
      type: 'BOX',
      locked: true,
      ol: 1,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: {
        self: { href: `${BASE}/v1/load-units/${pKey}` },
        'packaging-units': { href: `${BASE}/v1/load-units/${pKey}/packaging-units` },
      },
    });
    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    expect(stored).toMatchObject({ locked: true, ol: 1 });
  });

  it('unlocks it again, ol raised once more', async () => {
    const { bk, pKey } = await aLoadUnit();
    await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: true });

    const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: false });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ locked: false, ol: 2 });
    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    expect(stored).toMatchObject({ locked: false, ol: 2 });
  });

  it('leaves ol unchanged when locked does not change', async () => {
    const { bk, pKey } = await aLoadUnit();

    const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: false });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ locked: false, ol: 0 });
    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    expect(stored).toMatchObject({ locked: false, ol: 0 });
  });

  it('answers with the embedded Product of an assigned LoadUnit', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

    const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: true });

    expect(response.body).toMatchObject({ locked: true, ol: 2, product: { pKey: product.pKey, sku: product.sku } });
  });

  it.each([['true'], [1], [null]])(
    'answers 400 core.validation.error for locked=%j (D0: no coercion)',
    async (locked) => {
      const { bk, pKey } = await aLoadUnit();

      const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked });

      expectValidationError(response, [['locked', 'must be of type boolean']]);
      const [stored] = await loadUnitsOf(ctx.db.pool, bk);
      expect(stored).toMatchObject({ locked: false, ol: 0 });
    },
  );

  it('answers 400 core.validation.error when locked is missing', async () => {
    const { pKey } = await aLoadUnit();

    expectValidationError(await patch(ctx.app, `/v1/load-units/${pKey}`, { other: true }), [['locked', 'required']]);
  });

  it('answers 404 owms.wms.inv.lu.pKeyNotExists for an unknown or malformed key', async () => {
    for (const pKey of ['1b0f8e3c-1d2a-4c5b-9e8f-0a1b2c3d4e5f', '42']) {
      const response = await patch(ctx.app, `/v1/load-units/${pKey}`, { locked: true });

      expectApiDeclined(response, {
        status: 404,
        message: `LoadUnit with pKey [${pKey}] does not exist`,
        messageKey: 'owms.wms.inv.lu.pKeyNotExists',
        obj: [pKey],
        class: 'String',
      });
    }
  });
});
