import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { admitProduct, requireLoadUnitAt } from '../../src/load-units/service.js';
import { useTestApp } from '../support/app.js';
import { givenDivided, givenPackagingUnitIn, givenProduct, loadUnitsOf, PIECE, put, unique } from './load-unit-api.js';

const ctx = useTestApp({ INVENTORY_MIXED_LOADUNITS: 'true' });

async function storedProductId(pKey: string): Promise<number | null> {
  const { rows } = await ctx.db.pool.query<{ product_id: string | null }>(
    'SELECT product_id FROM load_unit WHERE p_key = $1',
    [pKey],
  );
  const id = rows[0]!.product_id;
  return id === null ? null : Number(id);
}

describe('D17 with INVENTORY_MIXED_LOADUNITS=true', () => {
  it('reads the setting from the environment', () => {
    expect(ctx.config.mixedLoadUnits).toBe(true);
  });

  it('assigns another Product to a LoadUnit already assigned to one (the new assignment replaces it)', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);
    const [loadUnit] = await loadUnitsOf(ctx.db.pool, bk);
    const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    expect((await put(ctx.app, `/v1/load-units/${loadUnit!.pKey}`, { sku: first.sku, baseUnit: PIECE })).status).toBe(
      200,
    );

    const response = await put(ctx.app, `/v1/load-units/${loadUnit!.pKey}`, { sku: second.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
    expect(await storedProductId(loadUnit!.pKey)).toBe(second.id);
  });

  it('assigns a Product to a LoadUnit carrying PackagingUnits of another one', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);
    const [loadUnit] = await loadUnitsOf(ctx.db.pool, bk);
    const carried = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const other = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await givenPackagingUnitIn(ctx.db.pool, loadUnit!.pKey, carried.id);

    const response = await put(ctx.app, `/v1/load-units/${loadUnit!.pKey}`, { sku: other.sku, baseUnit: PIECE });

    expect(response.status).toBe(200);
    expect(await storedProductId(loadUnit!.pKey)).toBe(other.id);
  });

  it('admitProduct with mixed LoadUnits allowed keeps the first assignment and admits other Products', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);
    const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    await withTransaction(ctx.db.pool, async (tx) => {
      const loadUnit = await requireLoadUnitAt(tx, bk, '1');
      await admitProduct(tx, loadUnit, first, ctx.config.mixedLoadUnits);
      await admitProduct(tx, loadUnit, second, ctx.config.mixedLoadUnits);
    });

    const [loadUnit] = await loadUnitsOf(ctx.db.pool, bk);
    expect(loadUnit).toMatchObject({ productId: first.id, ol: 1 });
  });
});
