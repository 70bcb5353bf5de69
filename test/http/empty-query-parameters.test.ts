import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  aUnit,
  givenGroups,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitOnLocation,
  givenUnitsInLoadUnit,
  stockApi,
  uniqueKey,
  type SeededProduct,
} from '../support/stock.js';
import { aQuantity } from '../support/builders.js';

/**
 * Issue 13: an empty query parameter is an absent one, as an RFC 6570 template expanded without its optional
 * variables sends it (`/v1/products?sku={sku}&uom={uom}` → `?sku=&uom=`). One finder of each kind is asked
 * both ways and must answer the same.
 */
const ctx = useTestApp();
const api = stockApi(ctx);

let product: SeededProduct;
let group: string;
let locationId: string;
let erpCode: string;
let bk: string;

beforeAll(async () => {
  group = uniqueKey('GRP');
  await givenGroups(ctx, { name: group });
  ({ locationId, erpCode } = await givenLocation(ctx, { locationGroupName: group }));
  product = await givenProduct(ctx);
  bk = await givenTransportUnitOn(ctx, locationId);
  await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2), aUnit(product.sku, 3)]);
  await givenUnitOnLocation(ctx, product.sku, locationId, 5);
});

/** Status, content type and body: what a client sees (a 400's timestamp-free body included). */
function answer(response: Response): { status: number; type: string | undefined; body: unknown } {
  return { status: response.status, type: response.headers['content-type'], body: response.body as unknown };
}

async function expectSameAnswer(withEmpty: string, without: string, expectedStatus: number): Promise<void> {
  const [sent, absent] = [answer(await api.get(withEmpty)), answer(await api.get(without))];
  expect(absent.status).toBe(expectedStatus);
  expect(sent).toStrictEqual(absent);
}

describe('an empty optional query parameter is absent', () => {
  it('in the Product finders: ?sku=&uom= lists all, ?sku=X&uom= finds by SKU', async () => {
    const all = await api.get('/v1/products?sku=&uom=');
    expect(all.status).toBe(200);
    expect(all.text).toBe((await api.get('/v1/products')).text);
    await expectSameAnswer(`/v1/products?sku=${product.sku}&uom=`, `/v1/products?sku=${product.sku}`, 200);
  });

  it('in the PackagingUnit finder by SKU (packaging-units-findforproduct without its optional variables)', async () => {
    await expectSameAnswer(
      `/v1/packaging-units?sku=${product.sku}&amount=&sortDirection=&sortProperty=`,
      `/v1/packaging-units?sku=${product.sku}`,
      200,
    );
  });

  it('in the PackagingUnit finder by Product and LocationGroup', async () => {
    const path = `/v1/packaging-units?productPKey=${product.pKey}&locationGroupName=${group}`;
    await expectSameAnswer(`${path}&sortDirection=&sortProperty=`, path, 200);
  });

  it('in the PackagingUnit finder by Location: an empty sku does not make it a mixed query', async () => {
    await expectSameAnswer(
      `/v1/packaging-units?sku=&productPKey=&locationId=${locationId}`,
      `/v1/packaging-units?locationId=${locationId}`,
      200,
    );
  });

  it('in the Location finder: one of locationId and erpCode given, the other empty', async () => {
    await expectSameAnswer(
      `/v1/locations?locationId=${locationId}&erpCode=`,
      `/v1/locations?locationId=${locationId}`,
      200,
    );
    await expectSameAnswer(`/v1/locations?locationId=&erpCode=${erpCode}`, `/v1/locations?erpCode=${erpCode}`, 200);
  });

  it('in the finders by one required key: empty is missing (400 naming it), as without it', async () => {
    await expectSameAnswer('/v1/location-groups?name=', '/v1/location-groups', 400);
    await expectSameAnswer('/v1/transport-units?bk=', '/v1/transport-units', 400);
  });

  it('in the allocation options: empty groups and allowPartial are the defaults', async () => {
    const request = { sku: product.sku, qty: aQuantity(1) };
    const withEmpty = await api.post('/allocation/transport-units?sourceLocationGroupNames=&allowPartial=', request);
    expect(withEmpty.status).toBe(200);
    expect(withEmpty.body).toHaveLength(1);
  });
});
