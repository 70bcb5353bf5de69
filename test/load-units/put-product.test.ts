import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { expectServerDeclined } from '../support/http.js';
import { bearer } from '../support/tokens.js';
import {
  get,
  givenDivided,
  givenPackagingUnitIn,
  givenProduct,
  GRAM,
  HOST,
  loadUnitsOf,
  PIECE,
  put,
  unique,
  UNITS_PKG,
} from './load-unit-api.js';

const ctx = useTestApp();

async function aLoadUnit(): Promise<{ bk: string; pKey: string }> {
  const bk = unique('TU');
  await givenDivided(ctx.app, bk, 2);
  const [first] = await loadUnitsOf(ctx.db.pool, bk);
  return { bk, pKey: first!.pKey };
}

async function storedLoadUnit(pKey: string): Promise<{ productId: number | null; ol: number }> {
  const { rows } = await ctx.db.pool.query<{ product_id: string | null; ol: number }>(
    'SELECT product_id, ol FROM load_unit WHERE p_key = $1',
    [pKey],
  );
  const row = rows[0]!;
  return { productId: row.product_id === null ? null : Number(row.product_id), ol: row.ol };
}

describe('PUT /v1/load-units/{pKey} (lu-putproductinto), one Product per LoadUnit (default)', () => {
  it('assigns the Product: 200 without a body, product stored and ol raised', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    expect(await storedLoadUnit(pKey)).toEqual({ productId: product.id, ol: 1 });
  });

  it('accepts the same Product again without changing anything', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
    expect(await storedLoadUnit(pKey)).toEqual({ productId: product.id, ol: 1 });
  });

  it('accepts any quantity of the Product’s kind (another unit, no @class) and ignores unknown fields', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, {
      sku: product.sku,
      baseUnit: { unitType: [`${UNITS_PKG}.PieceUnit`, 'DOZ'], magnitude: 2 },
      colour: 'ignored',
    });

    expect(response.status).toBe(200);
    expect((await storedLoadUnit(pKey)).productId).toBe(product.id);
  });

  it('answers 400 owms.wms.inv.lu.alreadyAssigned when the LoadUnit is assigned to another Product', async () => {
    const { pKey } = await aLoadUnit();
    const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await put(ctx.app, `/v1/load-units/${pKey}`, { sku: first.sku, baseUnit: PIECE });

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: second.sku, baseUnit: PIECE });

    expectApiDeclined(response, {
      status: 400,
      message: `LoadUnit [${pKey}] is already assigned to or carries another Product than [${second.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [pKey, second.sku],
      class: 'String',
    });
    expect(await storedLoadUnit(pKey)).toEqual({ productId: first.id, ol: 1 });
  });

  it('answers 400 owms.wms.inv.lu.alreadyAssigned when the unassigned LoadUnit carries another Product', async () => {
    const { pKey } = await aLoadUnit();
    const carried = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const other = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await givenPackagingUnitIn(ctx.db.pool, pKey, carried.id);

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: other.sku, baseUnit: PIECE });

    expectApiDeclined(response, {
      status: 400,
      message: `LoadUnit [${pKey}] is already assigned to or carries another Product than [${other.sku}]`,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [pKey, other.sku],
      class: 'String',
    });
    expect(await storedLoadUnit(pKey)).toEqual({ productId: null, ol: 0 });
  });

  it('assigns the Product the LoadUnit already carries', async () => {
    const { pKey } = await aLoadUnit();
    const carried = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await givenPackagingUnitIn(ctx.db.pool, pKey, carried.id);

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: carried.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
    expect((await storedLoadUnit(pKey)).productId).toBe(carried.id);
  });

  it('does not count an emptied PackagingUnit of another Product as carried', async () => {
    const { pKey } = await aLoadUnit();
    const gone = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const next = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await givenPackagingUnitIn(ctx.db.pool, pKey, gone.id, 0);

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: next.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
  });

  it('answers 404 owms.wms.inv.lu.pKeyNotExists for an unknown or malformed LoadUnit key', async () => {
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    for (const pKey of ['0b0f8e3c-1d2a-4c5b-9e8f-0a1b2c3d4e5f', 'nope']) {
      const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

      expectApiDeclined(response, {
        status: 404,
        message: `LoadUnit with pKey [${pKey}] does not exist`,
        messageKey: 'owms.wms.inv.lu.pKeyNotExists',
        obj: [pKey],
        class: 'String',
      });
    }
  });

  it('answers 404 not.found for an unknown SKU', async () => {
    const { pKey } = await aLoadUnit();
    const sku = unique('UNKNOWN');

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku, baseUnit: PIECE });

    expectApiDeclined(response, {
      status: 404,
      message: `No Product with SKU [${sku}] exists`,
      messageKey: 'not.found',
    });
    expect(await storedLoadUnit(pKey)).toEqual({ productId: null, ol: 0 });
  });

  it('answers 400 core.validation.error on baseUnit when it is of another kind than the Product’s', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    const response = await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: GRAM });

    expectValidationError(response, [['baseUnit', "must be a Piece quantity like the Product's baseUnit"]]);
    expect(await storedLoadUnit(pKey)).toEqual({ productId: null, ol: 0 });
  });

  it('answers 400 core.validation.error naming every missing or invalid field', async () => {
    const { pKey } = await aLoadUnit();

    // The wording for a missing quantity belongs to the shared quantity schema; the fields named are what counts here.
    expectApiDeclined(await put(ctx.app, `/v1/load-units/${pKey}`, {}), {
      status: 400,
      message: expect.stringMatching(/^sku: required; baseUnit: /),
      messageKey: 'core.validation.error',
      obj: ['sku', 'baseUnit'],
    });
    expectValidationError(
      await put(ctx.app, `/v1/load-units/${pKey}`, { sku: 7, baseUnit: { ...PIECE, magnitude: 0 } }),
      [
        ['sku', 'must be of type string'],
        ['baseUnit.magnitude', 'must be greater than 0'],
      ],
    );
    expectValidationError(await put(ctx.app, `/v1/load-units/${pKey}`, { sku: '  ', baseUnit: PIECE }), [
      ['sku', 'must not be blank'],
    ]);
  });

  it('answers 415 for a form body', async () => {
    const { pKey } = await aLoadUnit();

    const response = await request(ctx.app)
      .put(`/v1/load-units/${pKey}`)
      .set('Authorization', bearer())
      .set('Host', HOST)
      .type('form')
      .send({ sku: 'x' });

    expectServerDeclined(response, {
      status: 415,
      error: 'Unsupported Media Type',
      exception: 'HttpMediaTypeNotSupportedException',
      message: /application\/x-www-form-urlencoded/,
      path: `/v1/load-units/${pKey}`,
    });
  });

  it('lets exactly one of two parallel assignments of different Products win', async () => {
    for (let round = 0; round < 5; round++) {
      const { pKey } = await aLoadUnit();
      const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
      const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

      const responses = await Promise.all([
        put(ctx.app, `/v1/load-units/${pKey}`, { sku: first.sku, baseUnit: PIECE }),
        put(ctx.app, `/v1/load-units/${pKey}`, { sku: second.sku, baseUnit: PIECE }),
      ]);

      expect(responses.map((response) => response.status).sort()).toEqual([200, 400]);
      const winner = responses[0]!.status === 200 ? first : second;
      expect(await storedLoadUnit(pKey)).toEqual({ productId: winner.id, ol: 1 });
    }
  });

  it('shows the assignment in lu-findbypkey', async () => {
    const { pKey } = await aLoadUnit();
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await put(ctx.app, `/v1/load-units/${pKey}`, { sku: product.sku, baseUnit: PIECE });

    const response = await get(ctx.app, `/v1/load-units/${pKey}`);

    expect(response.body.product).toMatchObject({ pKey: product.pKey, sku: product.sku });
  });
});
