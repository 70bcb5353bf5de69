import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerAuth, Client, type Resource } from 'ketting';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aUnit, givenProduct, givenUnitsInLoadUnit, uniqueKey, type SeededProduct } from '../support/stock.js';
import { signToken } from '../support/tokens.js';

/**
 * Issue 13: a HAL client library (ketting), unmodified, walks from `/index` to a Product, its PackagingUnits, one
 * unit and its LoadUnit by following links only. The app runs behind a real HTTP server, so every href the client
 * follows is one the service wrote for that address.
 */
const ctx = useTestApp();
const HAL_JSON = 'application/hal+json';

let server: http.Server;
let client: Client;
let product: SeededProduct;
let transportUnitBK: string;

beforeAll(async () => {
  product = await givenProduct(ctx, { label: 'navigated' });
  transportUnitBK = uniqueKey('TU-HAL');
  await givenUnitsInLoadUnit(ctx, transportUnitBK, '1', [aUnit(product.sku, 4)]);

  server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new Client(`http://127.0.0.1:${port}/index`);
  client.use(bearerAuth(signToken()));
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server?.close((error) => (error ? reject(error) : resolve())));
});

interface ProductState {
  pKey: string;
  sku: string;
  label?: string;
}

interface UnitState {
  pKey: string;
  product: { sku: string };
}

interface LoadUnitState {
  transportUnitBK: string;
  physicalPosition: string;
}

/** The Product through the index, the products index and the templated find-by-SKU link. */
async function productBySku(
  variables: Record<string, string>,
  rel = 'products-findbysku',
): Promise<Resource<ProductState>> {
  return await client.go().follow('product-index').follow<ProductState>(rel, variables);
}

describe('a HAL client following links from /index', () => {
  it('finds the Product by expanding the templated products-findbysku link', async () => {
    const state = await (await productBySku({ sku: product.sku })).get();
    expect(state.data).toMatchObject({ pKey: product.pKey, sku: product.sku, label: 'navigated' });
  });

  it('finds the same Product when an optional template variable is left out (products-findbyskuanduom)', async () => {
    const resource = await productBySku({ sku: product.sku }, 'products-findbyskuanduom');
    expect(resource.uri).toMatch(/\?sku=[^&]+&uom=$/);
    expect((await resource.get()).data).toMatchObject({ pKey: product.pKey, sku: product.sku });
  });

  it('goes on to the Product’s packaging units (HAL list), one unit, and the unit’s LoadUnit', async () => {
    const productResource = await productBySku({ sku: product.sku });
    const units = await productResource.follow('packaging-units');
    const list = await units.get({ headers: { Accept: HAL_JSON } });
    expect(list.contentHeaders().get('Content-Type')).toMatch(/^application\/hal\+json/);

    const embedded = list.followAll<UnitState>('packaging-units');
    expect(embedded).toHaveLength(1);
    const unit = embedded[0]!;
    const unitState = await unit.refresh();
    expect(unitState.data.product.sku).toBe(product.sku);
    expect(unitState.links.get('self')?.href).toBe(unit.uri);

    const loadUnit = await unitState.follow<LoadUnitState>('loadUnit').get();
    expect(loadUnit.data).toMatchObject({ transportUnitBK, physicalPosition: '1' });
    expect((await loadUnit.follow('packaging-units').get()).uri).toContain('/packaging-units');
  });
});
