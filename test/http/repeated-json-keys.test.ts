import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { UNITS_PKG, uniqueSku } from '../support/builders.js';
import { rowCounts } from '../products/product-api.js';
import {
  call,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  qtyAvailableOf,
} from '../support/stock-api.js';

/**
 * Issue 15: JSON.parse keeps the last of two equal keys, so `"magnitude":1,"magnitude":100000` once allocated
 * everything. A body naming a key twice in one object is refused before anything acts on it.
 */
const ctx = useTestApp();
const PIECE_UNIT = `"unitType":["${UNITS_PKG}.PieceUnit","PC"]`;

function expectRepeatedKey(response: { status: number; body: unknown }, key: string): void {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({
    exception: 'HttpMessageNotReadableException',
    message: `Request body is not readable: an object names the key "${key}" more than once`,
  });
}

describe('a JSON body naming a key twice in one object', () => {
  it('is refused by the allocation, which then takes nothing', async () => {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const bk = await givenTransportUnitOn(ctx.app, location.locationId);
    const [unit] = await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pc(25) }]);
    const body = `{"sku":"${sku}","qty":{${PIECE_UNIT},"magnitude":1,"magnitude":100000}}`;

    const response = await call(ctx.app, 'post', '/allocation/transport-units')
      .set('Content-Type', 'application/json')
      .send(body);

    expectRepeatedKey(response, 'magnitude');
    expect(await qtyAvailableOf(ctx.app, unit!.pKey)).toEqual(pc(25));
  });

  it('is refused by the bulk Product create, which then stores nothing', async () => {
    const before = await rowCounts(ctx.db.pool);
    const sku = uniqueSku('TWICE');
    const body = `[{"sku":"${sku}","baseUnit":{${PIECE_UNIT},"magnitude":1}},{"sku":"${sku}-2","sku":"${sku}-3","baseUnit":{${PIECE_UNIT},"magnitude":1}}]`;

    const response = await call(ctx.app, 'post', '/v1/products').set('Content-Type', 'application/json').send(body);

    expectRepeatedKey(response, 'sku');
    expect(await rowCounts(ctx.db.pool)).toEqual(before);
  });

  it('is refused when the second spelling is escaped', async () => {
    const sku = uniqueSku('ESCAPED');
    const body = `{"sku":"${sku}","\\u0073ku":"${sku}-2","baseUnit":{${PIECE_UNIT},"magnitude":1}}`;

    const response = await call(ctx.app, 'post', '/v1/products').set('Content-Type', 'application/json').send(body);

    expectRepeatedKey(response, 'sku');
  });

  it('leaves the same key in sibling objects alone', async () => {
    const sku = uniqueSku('SIBLINGS');
    const body = `[{"sku":"${sku}-1","baseUnit":{${PIECE_UNIT},"magnitude":1}},{"sku":"${sku}-2","baseUnit":{${PIECE_UNIT},"magnitude":1}}]`;

    const response = await call(ctx.app, 'post', '/v1/products').set('Content-Type', 'application/json').send(body);

    expect(response.status).toBe(201);
  });
});
