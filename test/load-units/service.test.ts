import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { ApiError } from '../../src/http/api-error.js';
import {
  admitProduct,
  findLoadUnitByPKey,
  lockLoadUnitAt,
  obtainLoadUnit,
  requireLoadUnitAt,
  type LoadUnitRow,
} from '../../src/load-units/service.js';
import { loadUnitView } from '../../src/load-units/view.js';
import { useTestApp } from '../support/app.js';
import {
  givenDivided,
  givenPackagingUnitIn,
  givenProduct,
  loadUnitsOf,
  transportUnitCount,
  unique,
  UNITS_PKG,
} from './load-unit-api.js';

const ctx = useTestApp();

async function caught(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

const errorOf = (error: ApiError) => ({ status: error.status, messageKey: error.messageKey, obj: error.obj });

/** Whether another session could lock the LoadUnit right now (it cannot while a transaction holds it). */
async function lockableElsewhere(pKey: string): Promise<boolean> {
  const client = await ctx.db.pool.connect();
  try {
    await client.query('SELECT id FROM load_unit WHERE p_key = $1 FOR UPDATE NOWAIT', [pKey]);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return false;
    throw error;
  } finally {
    client.release();
  }
}

describe('obtainLoadUnit', () => {
  it('creates a missing LoadUnit and registers its TransportUnit on the spot', async () => {
    const bk = unique('TU');

    const loadUnit = await withTransaction(ctx.db.pool, (tx) =>
      obtainLoadUnit(tx, { transportUnitBK: bk, position: 'A1', loadUnitType: 'BIN' }),
    );

    expect(loadUnit).toEqual({
      id: expect.any(Number),
      pKey: expect.any(String),
      transportUnitId: expect.any(Number),
      transportUnitBK: bk,
      physicalPosition: 'A1',
      label: null,
      type: 'BIN',
      locked: false,
      productId: null,
      dimension: null,
      ol: 0,
      createDt: expect.any(Date),
    });
    expect(await transportUnitCount(ctx.db.pool, bk)).toBe(1);
    expect(await loadUnitsOf(ctx.db.pool, bk)).toEqual([
      { pKey: loadUnit.pKey, physicalPosition: 'A1', type: 'BIN', locked: false, productId: null, ol: 0 },
    ]);
  });

  it('returns the existing LoadUnit without needing a loadUnitType', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2, 'BOX');
    const [first] = await loadUnitsOf(ctx.db.pool, bk);

    const loadUnit = await withTransaction(ctx.db.pool, (tx) =>
      obtainLoadUnit(tx, { transportUnitBK: bk, position: '1' }),
    );

    expect(loadUnit).toMatchObject({ pKey: first!.pKey, physicalPosition: '1', type: 'BOX' });
    expect(await loadUnitsOf(ctx.db.pool, bk)).toHaveLength(2);
  });

  it('adds a LoadUnit to a TransportUnit that has others', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2, 'BOX');

    await withTransaction(ctx.db.pool, (tx) =>
      obtainLoadUnit(tx, { transportUnitBK: bk, position: '3', loadUnitType: 'TRAY' }),
    );

    expect((await loadUnitsOf(ctx.db.pool, bk)).map((lu) => [lu.physicalPosition, lu.type])).toEqual([
      ['1', 'BOX'],
      ['2', 'BOX'],
      ['3', 'TRAY'],
    ]);
  });

  it.each([[undefined], [''], ['   ']])(
    'answers 400 owms.wms.inv.pu.loadUnitTypeMissing for loadUnitType=%j when it must create one',
    async (loadUnitType) => {
      const bk = unique('TU');

      const error = await caught(
        withTransaction(ctx.db.pool, (tx) => obtainLoadUnit(tx, { transportUnitBK: bk, position: '4', loadUnitType })),
      );

      expect(errorOf(error)).toEqual({
        status: 400,
        messageKey: 'owms.wms.inv.pu.loadUnitTypeMissing',
        obj: ['4', bk],
      });
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(0);
    },
  );

  it('answers 400 core.validation.error for a blank position', async () => {
    const error = await caught(
      withTransaction(ctx.db.pool, (tx) =>
        obtainLoadUnit(tx, { transportUnitBK: unique('TU'), position: ' ', loadUnitType: 'BOX' }),
      ),
    );

    expect(errorOf(error)).toEqual({ status: 400, messageKey: 'core.validation.error', obj: ['luPos'] });
  });

  it('returns the LoadUnit locked for the rest of the transaction', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const [existing] = await loadUnitsOf(ctx.db.pool, bk);

    await withTransaction(ctx.db.pool, async (tx) => {
      await obtainLoadUnit(tx, { transportUnitBK: bk, position: '1' });
      expect(await lockableElsewhere(existing!.pKey)).toBe(false);
    });
    expect(await lockableElsewhere(existing!.pKey)).toBe(true);
  });

  it('creates one LoadUnit when two transactions obtain the same new one at once', async () => {
    for (let round = 0; round < 8; round++) {
      const bk = unique('RACE');
      const target = { transportUnitBK: bk, position: '1', loadUnitType: 'BOX' };

      const [first, second] = await Promise.all([
        withTransaction(ctx.db.pool, (tx) => obtainLoadUnit(tx, target)),
        withTransaction(ctx.db.pool, (tx) => obtainLoadUnit(tx, target)),
      ]);

      expect(first.pKey).toBe(second.pKey);
      expect(await loadUnitsOf(ctx.db.pool, bk)).toHaveLength(1);
      expect(await transportUnitCount(ctx.db.pool, bk)).toBe(1);
    }
  });
});

describe('lockLoadUnitAt and requireLoadUnitAt', () => {
  it('find the LoadUnit at the position and lock it', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 2);
    const [, second] = await loadUnitsOf(ctx.db.pool, bk);

    await withTransaction(ctx.db.pool, async (tx) => {
      expect((await lockLoadUnitAt(tx, bk, '2'))?.pKey).toBe(second!.pKey);
      expect((await requireLoadUnitAt(tx, bk, '2')).pKey).toBe(second!.pKey);
      expect(await lockableElsewhere(second!.pKey)).toBe(false);
    });
  });

  it('lockLoadUnitAt answers undefined for a missing position or TransportUnit', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);

    await withTransaction(ctx.db.pool, async (tx) => {
      expect(await lockLoadUnitAt(tx, bk, '2')).toBeUndefined();
      expect(await lockLoadUnitAt(tx, unique('NOPE'), '1')).toBeUndefined();
    });
  });

  it('requireLoadUnitAt answers 404 owms.wms.inv.lu.onTuNotExists with [transportUnitBK, position]', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const unknown = unique('NOPE');

    const missingPosition = await caught(withTransaction(ctx.db.pool, (tx) => requireLoadUnitAt(tx, bk, '9')));
    const missingTransportUnit = await caught(
      withTransaction(ctx.db.pool, (tx) => requireLoadUnitAt(tx, unknown, '1')),
    );

    expect(errorOf(missingPosition)).toEqual({
      status: 404,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [bk, '9'],
    });
    expect(missingPosition.message).toBe(`No LoadUnit at position [9] on TransportUnit [${bk}]`);
    expect(errorOf(missingTransportUnit)).toEqual({
      status: 404,
      messageKey: 'owms.wms.inv.lu.onTuNotExists',
      obj: [unknown, '1'],
    });
    expect(await transportUnitCount(ctx.db.pool, unknown)).toBe(0);
  });
});

describe('admitProduct (D17)', () => {
  async function aLoadUnitAt(bk: string, tx: Parameters<typeof requireLoadUnitAt>[0]): Promise<LoadUnitRow> {
    return requireLoadUnitAt(tx, bk, '1');
  }

  it('assigns the Product to a LoadUnit that has none, and the passed row follows', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    const row = await withTransaction(ctx.db.pool, async (tx) => {
      const loadUnit = await aLoadUnitAt(bk, tx);
      await admitProduct(tx, loadUnit, product, false);
      return loadUnit;
    });

    expect(row).toMatchObject({ productId: product.id, ol: 1 });
    expect(await loadUnitsOf(ctx.db.pool, bk)).toMatchObject([{ productId: product.id, ol: 1 }]);
  });

  it('admits the assigned Product again without a change', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const product = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    await withTransaction(ctx.db.pool, async (tx) => {
      const loadUnit = await aLoadUnitAt(bk, tx);
      await admitProduct(tx, loadUnit, product, false);
      await admitProduct(tx, loadUnit, product, false);
    });

    expect(await loadUnitsOf(ctx.db.pool, bk)).toMatchObject([{ productId: product.id, ol: 1 }]);
  });

  it('refuses another Product with 400 owms.wms.inv.lu.alreadyAssigned, even through a stale row', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    const error = await caught(
      withTransaction(ctx.db.pool, async (tx) => {
        const loadUnit = await aLoadUnitAt(bk, tx);
        const staleCopy = { ...loadUnit };
        await admitProduct(tx, loadUnit, first, false);
        await admitProduct(tx, staleCopy, second, false);
      }),
    );

    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    expect(errorOf(error)).toEqual({
      status: 400,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [stored!.pKey, second.sku],
    });
    expect(stored).toMatchObject({ productId: null, ol: 0 });
  });

  it('refuses a Product other than the one the LoadUnit carries, and admits that one', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    const carried = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const other = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    await givenPackagingUnitIn(ctx.db.pool, stored!.pKey, carried.id);

    const error = await caught(
      withTransaction(ctx.db.pool, async (tx) => admitProduct(tx, await aLoadUnitAt(bk, tx), other, false)),
    );
    await withTransaction(ctx.db.pool, async (tx) => admitProduct(tx, await aLoadUnitAt(bk, tx), carried, false));

    expect(errorOf(error)).toEqual({
      status: 400,
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [stored!.pKey, other.sku],
    });
    expect(await loadUnitsOf(ctx.db.pool, bk)).toMatchObject([{ productId: carried.id }]);
  });

  it('admits any Product when mixed LoadUnits are allowed, keeping the first assignment', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1);
    const first = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));
    const second = await givenProduct(ctx.app, ctx.db.pool, unique('SKU'));

    await withTransaction(ctx.db.pool, async (tx) => {
      const loadUnit = await aLoadUnitAt(bk, tx);
      await admitProduct(tx, loadUnit, first, true);
      await admitProduct(tx, loadUnit, second, true);
    });

    expect(await loadUnitsOf(ctx.db.pool, bk)).toMatchObject([{ productId: first.id, ol: 1 }]);
  });
});

describe('findLoadUnitByPKey and loadUnitView', () => {
  it('answers 404 owms.wms.inv.lu.pKeyNotExists for an unknown or malformed key', async () => {
    for (const pKey of ['2b0f8e3c-1d2a-4c5b-9e8f-0a1b2c3d4e5f', "'; DROP TABLE load_unit; --"]) {
      const error = await caught(findLoadUnitByPKey(ctx.db.pool, pKey));
      expect(errorOf(error)).toEqual({ status: 404, messageKey: 'owms.wms.inv.lu.pKeyNotExists', obj: [pKey] });
    }
  });

  it('renders a LoadUnit for embedding, with a partial Product when one is given', async () => {
    const bk = unique('TU');
    await givenDivided(ctx.app, bk, 1, 'BOX');
    const [stored] = await loadUnitsOf(ctx.db.pool, bk);
    const row = await findLoadUnitByPKey(ctx.db.pool, stored!.pKey);

    const view = loadUnitView(row, {
      pKey: 'p-1',
      sku: 'SKU-1',
      label: null,
      baseUnitMagnitude: '12',
      baseUnitCode: 'DOZ',
      description: 'twelve',
      ol: 0,
    });

    expect(JSON.parse(JSON.stringify(view))).toEqual({
      pKey: stored!.pKey,
      transportUnitBK: bk,
      physicalPosition: '1',
      type: 'BOX',
      locked: false,
      product: {
        pKey: 'p-1',
        sku: 'SKU-1',
        baseUnit: { '@class': `${UNITS_PKG}.Piece`, unitType: [`${UNITS_PKG}.PieceUnit`, 'DOZ'], magnitude: 12 },
        description: 'twelve',
      },
      ol: 0,
      createDt: row.createDt.toISOString(),
    });
    expect(loadUnitView(row)).not.toHaveProperty('product');
  });
});
