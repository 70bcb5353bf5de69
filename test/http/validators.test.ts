import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectApiDeclined } from '../support/api-errors.js';
import { aProduct, type Json } from '../support/builders.js';
import {
  aUnit,
  givenLocation,
  givenProduct,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  storedUnit,
  uniqueKey,
} from '../support/stock.js';

const ctx = useTestApp();
const api = stockApi(ctx);
const HAL = 'application/hal+json';
const JSON_TYPE = 'application/json';

async function productOl(pKey: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ ol: number }>('SELECT ol FROM product WHERE p_key = $1', [pKey]);
  return rows[0]!.ol;
}

function expectPreconditionFailed(response: Awaited<ReturnType<typeof api.get>>, pKey: string): void {
  expectApiDeclined(response, {
    status: 412,
    message: `The resource [${pKey}] has changed since the tag in If-Match was read; read it again`,
    messageKey: 'owms.wms.inv.preconditionFailed',
    obj: [pKey],
    class: 'String',
  });
}

describe('ETag and If-None-Match on single resources (D33)', () => {
  it('tags a Product by pKey and by SKU, differently per media type, and answers 304 without a body to the tag', async () => {
    const product = await givenProduct(ctx);

    const hal = await api.get(`/v1/products/${product.pKey}`, HAL);
    const plain = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE);
    const bySku = await api.get(`/v1/products?sku=${product.sku}`, HAL);

    expect(hal.status).toBe(200);
    expect(hal.headers.etag).toBe(`"${product.pKey}.0.hal-json"`);
    expect(plain.headers.etag).toBe(`"${product.pKey}.0.json"`);
    expect(bySku.headers.etag).toBe(hal.headers.etag);

    const unchanged = await api.get(`/v1/products/${product.pKey}`, HAL).set('If-None-Match', hal.headers.etag!);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(hal.headers.etag);

    const otherType = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE).set('If-None-Match', hal.headers.etag!);
    expect(otherType.status).toBe(200);
    expect(otherType.body).toEqual(plain.body);
  });

  it('changes the tag when the Product changes, so the old tag gets the new body', async () => {
    const product = await givenProduct(ctx);
    const before = await api.get(`/v1/products/${product.pKey}`, HAL);
    const changed: Json = { ...(before.body as Json), label: 'relabelled' };
    delete changed._links;
    expect((await api.put('/v1/products', changed)).status).toBe(200);

    const after = await api.get(`/v1/products/${product.pKey}`, HAL).set('If-None-Match', before.headers.etag!);

    expect(after.status).toBe(200);
    expect(after.headers.etag).toBe(`"${product.pKey}.1.hal-json"`);
    expect((after.body as Json).label).toBe('relabelled');
  });

  it("tags a LoadUnit by its own version and its Product's, and a PackagingUnit by its Product's, LoadUnit's and Location's", async () => {
    const product = await givenProduct(ctx);
    const bk = uniqueKey('TU');
    const [unit] = await givenUnitsInLoadUnit(ctx, bk, '1', [aUnit(product.sku, 2)]);
    const luKey = await loadUnitPKey(ctx.db.pool, bk, '1');

    const loadUnit = await api.get(`/v1/load-units/${luKey}`, HAL);
    const packagingUnit = await api.get(`/v1/packaging-units/${unit!.pKey}`, HAL);
    expect(loadUnit.headers.etag).toMatch(new RegExp(`^"${luKey}\\.\\d+\\.0\\.hal-json"$`));
    expect(packagingUnit.headers.etag).toMatch(new RegExp(`^"${unit!.pKey}\\.\\d+\\.0\\.\\d+\\.-\\.hal-json"$`));

    const current = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE);
    expect((await api.put('/v1/products', { ...(current.body as Json), label: 'new label' })).status).toBe(200);

    const loadUnitAfter = await api.get(`/v1/load-units/${luKey}`, HAL).set('If-None-Match', loadUnit.headers.etag!);
    const unitAfter = await api
      .get(`/v1/packaging-units/${unit!.pKey}`, HAL)
      .set('If-None-Match', packagingUnit.headers.etag!);
    expect(loadUnitAfter.status).toBe(200);
    expect((loadUnitAfter.body as { product: Json }).product.label).toBe('new label');
    expect(unitAfter.status).toBe(200);
    expect((unitAfter.body as { product: Json }).product.label).toBe('new label');
  });
});

describe('If-Match on PUT (D33)', () => {
  it('updates a Product whose tag If-Match names, in either media type, and answers the new tag', async () => {
    const product = await givenProduct(ctx);
    const read = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE);

    const response = await api
      .put('/v1/products', { ...(read.body as Json), label: 'matched' })
      .set('If-Match', `"other", ${read.headers.etag}`);

    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe(`"${product.pKey}.1.hal-json"`);
    expect(await productOl(product.pKey)).toBe(1);
  });

  it('answers 412 owms.wms.inv.preconditionFailed to a stale tag and changes nothing', async () => {
    const product = await givenProduct(ctx);
    const read = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE);
    expect((await api.put('/v1/products', { ...(read.body as Json), label: 'first' })).status).toBe(200);

    const stale = await api
      .put('/v1/products', { ...(read.body as Json), label: 'second', ol: undefined })
      .set('If-Match', read.headers.etag!);

    expectPreconditionFailed(stale, product.pKey);
    expect(await productOl(product.pKey)).toBe(1);
    expect(((await api.get(`/v1/products/${product.pKey}`, JSON_TYPE)).body as Json).label).toBe('first');
  });

  it('never matches a weak tag, and lets * pass for a Product that exists', async () => {
    const product = await givenProduct(ctx);
    const read = await api.get(`/v1/products/${product.pKey}`, JSON_TYPE);
    const weak = await api
      .put('/v1/products', { ...(read.body as Json), label: 'weak' })
      .set('If-Match', `W/${read.headers.etag}`);
    expectPreconditionFailed(weak, product.pKey);

    const any = await api.put('/v1/products', { ...(read.body as Json), label: 'any' }).set('If-Match', '*');
    expect(any.status).toBe(200);
  });

  it('answers 404, not 412, for an unknown Product', async () => {
    const unknown = { ...aProduct(), pKey: '00000000-0000-4000-8000-000000000000' };
    // A tag that names no current version: checked before the lookup, it would be the 412 (`*` passes any check).
    const response = await api.put('/v1/products', unknown).set('If-Match', `"${unknown.pKey}.0.hal-json"`);
    expect(response.status).toBe(404);
    expect((response.body as Json).messageKey).toBe('owms.wms.inv.product.notFoundByPKey');
  });

  it('moves a PackagingUnit only while its tag is current; a stale tag is a 412 and the unit stays', async () => {
    const product = await givenProduct(ctx);
    const [unit] = await givenUnitsInLoadUnit(ctx, uniqueKey('TU'), '1', [aUnit(product.sku, 3)]);
    const first = await givenLocation(ctx);
    const second = await givenLocation(ctx);
    const read = await api.get(`/v1/packaging-units/${unit!.pKey}`, HAL);

    const moved = await api
      .put(`/v1/packaging-units/${unit!.pKey}`, { actualLocation: { locationId: first.locationId } })
      .set('If-Match', read.headers.etag!);
    expect(moved.status).toBe(200);
    expect(moved.headers.etag).not.toBe(read.headers.etag);
    const afterMove = await storedUnit(ctx.db.pool, unit!.pKey);

    const stale = await api
      .put(`/v1/packaging-units/${unit!.pKey}`, { actualLocation: { locationId: second.locationId } })
      .set('If-Match', read.headers.etag!);

    expectPreconditionFailed(stale, unit!.pKey);
    expect(await storedUnit(ctx.db.pool, unit!.pKey)).toEqual(afterMove);

    const current = await api
      .put(`/v1/packaging-units/${unit!.pKey}`, { actualLocation: { locationId: second.locationId } })
      .set('If-Match', moved.headers.etag!);
    expect(current.status).toBe(200);
  });
});
