import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule, type Json, type ProductJson } from '../support/builders.js';
import { bearer } from '../support/tokens.js';
import { HOST, JSON_UTF8, rowCounts, withoutLinks } from './product-api.js';

const ctx = useTestApp();

const ndjson = (products: readonly unknown[]): string =>
  products.map((product) => `${JSON.stringify(product)}\n`).join('');

function importLines(products: readonly unknown[], query = '', requestId = 'import-modes'): request.Test {
  return request(ctx.app)
    .post(`/v1/products${query}`)
    .set('Authorization', bearer())
    .set('Host', HOST)
    .set('Content-Type', 'application/x-ndjson')
    .set('X-Request-Id', requestId)
    .send(ndjson(products));
}

async function stored(sku: string): Promise<Json> {
  const response = await request(ctx.app)
    .get(`/v1/products?sku=${encodeURIComponent(sku)}`)
    .set('Authorization', bearer())
    .set('Accept', 'application/json')
    .set('Host', HOST);
  expect(response.status).toBe(200);
  return withoutLinks(response.body as Json);
}

async function eventsOf(requestId: string): Promise<{ type: string; resource: Json }[]> {
  const { rows } = await ctx.db.pool.query<{ type: string; resource: Json }>(
    'SELECT type, resource FROM event_outbox WHERE request_id = $1 ORDER BY seq',
    [requestId],
  );
  return rows;
}

/** Three stored Products: one bare, one with a unit and a rule, one with details. */
async function storedThree(requestId: string): Promise<ProductJson[]> {
  const bare = aProduct();
  const rich = aProduct({
    units: [aProductUnit({ code: 'CRT', quantity: aQuantity(12, 'PC') })],
    stackingRules: [aStackingRule(bare.sku, 2)],
  });
  const detailed = aProduct({ label: 'Flour', details: { erp: { id: 7, tags: ['a', 'b'] } } });
  const products = [bare, rich, detailed];
  const response = await importLines(products, '', requestId);
  expect(response.status, response.text).toBe(201);
  return products;
}

describe('POST /v1/products as NDJSON with onConflict (D35)', () => {
  it('answers 201 with what it created, skipped and updated, fail being the default', async () => {
    const response = await importLines([aProduct(), aProduct()]);

    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual({ created: 2, skipped: 0, updated: 0 });
  });

  it('creates nothing when the same import is re-run with skip: 200, every Product skipped, no event', async () => {
    const products = await storedThree('modes-skip-first');
    const before = {
      rows: await rowCounts(ctx.db.pool),
      products: await Promise.all(products.map((p) => stored(p.sku))),
    };

    const response = await importLines(products, '?onConflict=skip', 'modes-skip-again');

    expect(response.status).toBe(200);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toEqual({ created: 0, skipped: 3, updated: 0 });
    expect(await eventsOf('modes-skip-again')).toEqual([]);
    expect({
      rows: await rowCounts(ctx.db.pool),
      products: await Promise.all(products.map((p) => stored(p.sku))),
    }).toEqual(before);
  });

  it('creates the new Products of a skip import, with their events and the Location of the one created', async () => {
    const [old] = await storedThree('modes-skip-mixed-first');
    const fresh = aProduct({ stockZone: 'B' });

    const response = await importLines([{ ...old!, label: 'ignored' }, fresh], '?onConflict=skip', 'modes-skip-mixed');

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ created: 1, skipped: 1, updated: 0 });
    expect(response.headers.location).toBeUndefined();
    expect((await stored(old!.sku)).label).toBeUndefined();
    const events = await eventsOf('modes-skip-mixed');
    expect(events).toEqual([{ type: 'product.event.created', resource: await stored(fresh.sku) }]);
  });

  it('answers the Location of the one Product a skip import sent and created (D8)', async () => {
    const fresh = aProduct();

    const response = await importLines([fresh], '?onConflict=skip');

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`http://${HOST}/v1/products/${(await stored(fresh.sku)).pKey as string}`);
  });

  it('updates with update exactly the Products whose line changed, raising their ol, one updated event each', async () => {
    const [bare, rich, detailed] = await storedThree('modes-update-first');
    const unchangedBefore = await Promise.all([bare!, detailed!].map((p) => stored(p.sku)));
    const richBefore = await stored(rich!.sku);
    const fresh = aProduct();
    const richChanged = { ...rich!, description: 'now with a description' };
    // The same details with their keys in another order change nothing.
    const bareSame = { ...bare! };
    const detailedSame = { ...detailed!, details: { erp: { tags: ['a', 'b'], id: 7 } } };

    const response = await importLines(
      [bareSame, richChanged, fresh, detailedSame],
      '?onConflict=update',
      'modes-update',
    );

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ created: 1, skipped: 2, updated: 1 });
    const richAfter = await stored(rich!.sku);
    expect(richAfter).toEqual({
      ...richBefore,
      description: 'now with a description',
      ol: 1,
      units: [{ ...(richBefore.units as Json[])[0], pKey: expect.any(String) }],
    });
    expect(await Promise.all([bare!, detailed!].map((p) => stored(p.sku)))).toEqual(unchangedBefore);
    expect(await eventsOf('modes-update')).toEqual([
      { type: 'product.event.updated', resource: richAfter },
      { type: 'product.event.created', resource: await stored(fresh.sku) },
    ]);
  });

  it('replaces with update as PUT does: a left-out field is cleared, new units and rules replace the old', async () => {
    const [bare, rich] = await storedThree('modes-replace-first');
    const replaced = {
      sku: rich!.sku,
      baseUnit: aQuantity(2, 'KG'),
      units: [aProductUnit({ code: 'BAG', quantity: aQuantity(25, 'KG') })],
    };

    const response = await importLines([replaced], '?onConflict=update', 'modes-replace');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ created: 0, skipped: 0, updated: 1 });
    const after = await stored(rich!.sku);
    expect(after).toMatchObject({
      sku: rich!.sku,
      baseUnit: aQuantity(2, 'KG'),
      units: [{ code: 'BAG', quantity: aQuantity(25, 'KG'), pKey: expect.any(String) }],
      stackingRules: [],
      ol: 1,
    });
    expect(after.label).toBeUndefined();
    expect((await stored(bare!.sku)).ol).toBe(0);
    expect(await eventsOf('modes-replace')).toEqual([{ type: 'product.event.updated', resource: after }]);
  });

  it.each(['skip', 'update'])(
    'answers a SKU sent twice with 409 alreadyExists with %s too, storing nothing',
    async (mode) => {
      const twice = aProduct();
      const before = await rowCounts(ctx.db.pool);

      const response = await importLines([twice, aProduct(), twice], `?onConflict=${mode}`);

      expectApiDeclined(response, {
        status: 409,
        message: `Products with SKU [${twice.sku}] already exist`,
        messageKey: 'owms.wms.inv.product.alreadyExists',
        obj: [twice.sku],
        class: 'String',
      });
      expect(await rowCounts(ctx.db.pool)).toEqual(before);
    },
  );

  it('answers an unknown onConflict, and onConflict with a JSON body, with 400 core.validation.error', async () => {
    const unknown = await importLines([aProduct()], '?onConflict=merge');
    const json = await request(ctx.app)
      .post('/v1/products?onConflict=skip')
      .set('Authorization', bearer())
      .set('Host', HOST)
      .send([aProduct()]);

    expectValidationError(unknown, [['onConflict', 'Invalid option: expected one of "fail"|"skip"|"update"']]);
    expectValidationError(json, [['onConflict', 'applies only to an application/x-ndjson import']]);
  });
});
