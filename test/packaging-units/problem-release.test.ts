import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { HAL_JSON_UTF8 } from '../support/http.js';
import {
  aUnit,
  givenProduct,
  givenUnitsInLoadUnit,
  loadUnitPart,
  loadUnitPKey,
  productPart,
  STOCK_BASE,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  unitView,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const failures = (bk: string, luPos = '1'): string =>
  `/v1/transport-units/${bk}/load-units/${luPos}/packaging-units/failures`;
const report = (sku: string, magnitude: number, code = 'PC'): Record<string, unknown> => ({
  messageNo: 'QC-17',
  messageText: 'Damaged packaging',
  product: { sku },
  quantity: aQuantity(magnitude, code),
});
const findable = async (sku: string): Promise<string[]> =>
  ((await api.get(`/v1/packaging-units?sku=${sku}`)).body as { pKey: string }[]).map((unit) => unit.pKey);

describe('POST .../packaging-units/failures (packaging-units-reportproblemforpuinlu, D20)', () => {
  it('splits the reported quantity off oldest first into new LOCKED units that record their parent', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const [older, newer] = await givenUnitsInLoadUnit(ctx, bk, '1', [
      aUnit(product.sku, 5),
      aUnit(product.sku, 1, 'DOZ'),
    ]);

    const response = await api.post(failures(bk), report(product.sku, 8));

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const stored = await storedUnitsOf(ctx.db.pool, product.sku);
    expect(stored.map((unit) => [unit.pKey, unit.quantity, unit.state, unit.parentPKey, unit.messageNo])).toEqual([
      [older!.pKey, '5 PC', 'LOCKED', null, 'QC-17'],
      [newer!.pKey, '9 PC', 'AVAILABLE', null, null],
      [expect.any(String), '3 PC', 'LOCKED', newer!.pKey, 'QC-17'],
    ]);
    expect(stored[2]!.messageText).toBe('Damaged packaging');
    expect(stored.map((unit) => unit.holder)).toEqual([`${bk}/1`, `${bk}/1`, `${bk}/1`]);
    expect(await findable(product.sku)).toEqual([newer!.pKey]);

    const split = await api.get(`/v1/packaging-units/${stored[2]!.pKey}`);
    expect(split.body).toEqual(
      unitView({
        pKey: stored[2]!.pKey,
        product: productPart(product),
        quantity: aQuantity(3),
        state: 'LOCKED',
        message: { messageNo: 'QC-17', messageText: 'Damaged packaging' },
        loadUnit: loadUnitPart(await loadUnitPKey(ctx.db.pool, bk, '1'), bk, '1'),
        _links: expect.any(Object),
      }),
    );
  });

  it('locks at most what is there', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2)]);

    expect((await api.post(failures(bk), report(product.sku, 20))).status).toBe(204);

    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => [unit.quantity, unit.state])).toEqual([
      ['2 PC', 'LOCKED'],
    ]);
    expect(await findable(product.sku)).toEqual([]);
  });

  it('answers 404 owms.wms.inv.lu.onTuNotExists for an unknown LoadUnit position', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2)]);

    expectApiDeclined(await api.post(failures(bk, '9'), report(product.sku, 1)), {
      status: 404,
      message: `No LoadUnit at position [9] on TransportUnit [${bk}]`,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [bk, '9'],
      class: 'String',
    });
  });

  it('answers 404 noPUOnLocation when the Product has no AVAILABLE unit in the LoadUnit', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2)]);
    await api.post(failures(bk), report(product.sku, 2)).expect(204);

    expectApiDeclined(await api.post(failures(bk), report(product.sku, 1)), {
      status: 404,
      message: `No PackagingUnit of Product [${product.sku}] is at [${bk}/1]`,
      messageKey: 'owms.wms.inv.pu.noPUOnLocation',
      obj: [product.sku, `${bk}/1`],
      class: 'String',
    });
  });

  it('answers 400 for a zero quantity or a Weight quantity of a Piece product', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2)]);

    expectValidationError(await api.post(failures(bk), report(product.sku, 0)), [
      ['quantity.magnitude', 'must be greater than 0'],
    ]);
    expectValidationError(await api.post(failures(bk), report(product.sku, 1, 'KG')), [
      ['quantity', "must be a Piece quantity like the Product's baseUnit"],
    ]);
    expect((await storedUnitsOf(ctx.db.pool, product.sku)).map((unit) => unit.state)).toEqual(['AVAILABLE']);
  });
});

describe('POST /v1/packaging-units/{pKey}/release (packaging-units-releasepu, D20)', () => {
  it('makes a LOCKED unit AVAILABLE again without message: 200 HAL with the unit', async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 4)]);
    await api.post(failures(bk), report(product.sku, 4)).expect(204);

    const response = await api.post(`/v1/packaging-units/${unit!.pKey}/release`);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const luPKey = await loadUnitPKey(ctx.db.pool, bk, '1');
    expect(response.body).toEqual(
      unitView({
        pKey: unit!.pKey,
        product: productPart(product),
        quantity: aQuantity(4),
        loadUnit: loadUnitPart(luPKey, bk, '1'),
        ol: 2,
        _links: {
          self: { href: `${STOCK_BASE}/v1/packaging-units/${unit!.pKey}` },
          loadUnit: { href: `${STOCK_BASE}/v1/load-units/${luPKey}` },
          transportUnit: { href: `${STOCK_BASE}/v1/transport-units?bk=${bk}` },
          product: { href: `${STOCK_BASE}/v1/products/${product.pKey}` },
        },
      }),
    );
    expect(await storedUnitsOf(ctx.db.pool, product.sku)).toEqual([
      expect.objectContaining({ state: 'AVAILABLE', messageNo: null, messageText: null }),
    ]);
    expect(await findable(product.sku)).toEqual([unit!.pKey]);
  });

  it('answers 404 owms.wms.inv.pu.pKeyNotExists for an unknown unit', async () => {
    const pKey = '4b0c1e36-6ad7-4f55-9a1c-3ac1e1f0a003';

    expectApiDeclined(await api.post(`/v1/packaging-units/${pKey}/release`), {
      status: 404,
      message: `No PackagingUnit with pKey [${pKey}] exists`,
      messageKey: 'owms.wms.inv.pu.pKeyNotExists',
      obj: [pKey],
      class: 'String',
    });
  });
});
