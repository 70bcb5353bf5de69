import { beforeAll, describe, expect, it } from 'vitest';
import { selectNewestBoundaryPosition, selectStockAt, selectStockPageAsOf } from '../../src/stock/sql.js';
import { useTestApp } from '../support/app.js';
import { rowsReadBy } from '../support/plans.js';
import { givenLocation, givenProduct, givenTransportUnitOn, givenUnitsIn, pc } from '../support/stock-api.js';
import { CURRENT_STOCK_READINGS, type StockReading } from './readings.js';

/**
 * D40: a stock reading says whether its Product changed after the boundary it reports (`changedSince`), from the
 * ledger rows of that Product alone. When one Product has most of the ledger, as after an intake of one SKU, the
 * statistics say any Product's rows are most of the table; a reading of every other Product must still not read
 * the rows of that one.
 */
const ctx = useTestApp();
const HOT_ROWS = 3000;
const ROWS_READ_BOUND = 50;

let quiet: string;

beforeAll(async () => {
  const { locationId } = await givenLocation(ctx.app);
  quiet = await givenProduct(ctx.app);
  await givenUnitsIn(ctx.app, await givenTransportUnitOn(ctx.app, locationId), '1', quiet, [{ quantity: pc(5) }]);
  const hot = await givenProduct(ctx.app);
  await givenUnitsIn(ctx.app, await givenTransportUnitOn(ctx.app, locationId), '1', hot, [{ quantity: pc(5) }]);
  // The hot Product's long ledger, written after the newest boundary, as an intake's rows are until numbered.
  await ctx.db.pool.query(
    `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                 reserved_before, reserved_after, actor, request_id)
     SELECT m.packaging_unit_pkey, m.product_id, 'CREATE', m.base_code, 0, 1, 0, 0, 'test', 'plans'
       FROM stock_movement m JOIN product p ON p.id = m.product_id, generate_series(1, $2::int)
      WHERE p.sku = $1`,
    [hot, HOT_ROWS],
  );
  await ctx.db.pool.query('VACUUM ANALYZE stock_movement');
}, 60_000);

describe('a stock reading while one Product has most of the ledger (D40)', () => {
  const readings: [string, StockReading][] = [
    ...CURRENT_STOCK_READINGS,
    ['its figures at an instant', (tx, sku) => selectStockAt(tx, sku, new Date().toISOString())],
    [
      'a page of Products at a boundary',
      async (tx, sku) =>
        selectStockPageAsOf(tx, {
          limit: 0,
          afterSku: sku.slice(0, -1),
          position: (await selectNewestBoundaryPosition(tx))!,
        }),
    ],
  ];

  it.each(readings)(
    `%s reads at most ${ROWS_READ_BOUND} ledger rows of the ${HOT_ROWS} of another`,
    async (_name, read) => {
      const { answer, statements } = await rowsReadBy(
        ctx,
        (tx) => read(tx, quiet),
        (name) => name.startsWith('stock_movement'),
      );
      expect({
        answer: JSON.stringify(answer).includes(quiet),
        withinBound: statements.every((statement) => statement.rows <= ROWS_READ_BOUND),
      }).toStrictEqual({ answer: true, withinBound: true });
    },
  );
});
