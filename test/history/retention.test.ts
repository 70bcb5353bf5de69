import { pino } from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { HistoryRetention, type HistorySettings } from '../../src/history/retention.js';
import { listLedgerParts } from '../../src/history/sql.js';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  release,
  type AllocationElement,
} from '../support/stock-api.js';
import { bearer } from '../support/tokens.js';

/** D34: the ledger kept by month (LEDGER_RETENTION_MONTHS) and ended reservations (RESERVATION_RETENTION_DAYS). */
const ctx = useTestApp();

/** The first instant of the month `offset` months from the current one, in UTC. */
function monthStart(offset: number): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
}

const OLD_MONTHS = 5;

async function runRetention(settings: Partial<HistorySettings> = {}): Promise<void> {
  const retention = new HistoryRetention(
    ctx.db.pool,
    { ledgerRetentionMonths: undefined, reservationRetentionDays: 90, ...settings },
    pino({ level: 'silent' }),
  );
  await retention.run();
  await retention.stop();
}

/**
 * The ledger of a service that has kept its months since migration 0015 for a while: a part before them, one part
 * per month of the last OLD_MONTHS and the current one, each with rows of its own (written as stock changes write
 * them; the ledger only takes inserts).
 */
async function givenLedgerMonthsSince(): Promise<void> {
  const parts = await listLedgerParts(ctx.db.pool);
  expect(parts.map((part) => part.name)[0]).toBe('stock_movement_legacy');
  await ctx.db.pool.query('DROP TABLE stock_movement_legacy');
  await ctx.db.pool.query(
    `CREATE TABLE stock_movement_before PARTITION OF stock_movement FOR VALUES FROM (MINVALUE) TO ('${monthStart(-OLD_MONTHS).toISOString()}')`,
  );
  for (let offset = -OLD_MONTHS; offset <= 0; offset++) {
    await ctx.db.pool.query(
      `CREATE TABLE stock_movement_${offset + OLD_MONTHS} PARTITION OF stock_movement
         FOR VALUES FROM ('${monthStart(offset).toISOString()}') TO ('${monthStart(offset + 1).toISOString()}')`,
    );
  }
  for (let offset = -OLD_MONTHS - 1; offset < 0; offset++) {
    await ctx.db.pool.query(
      `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                   reserved_before, reserved_after, actor, occurred_at)
       SELECT gen_random_uuid(), 1, 'MOVE', 'PC', 1, 1, 0, 0, 'history', $1::timestamptz + n * interval '1 hour'
         FROM generate_series(1, 3) AS n`,
      [monthStart(offset)],
    );
  }
}

async function ledgerRowsByMonth(): Promise<Record<string, number>> {
  const { rows } = await ctx.db.pool.query<{ month: Date; rows: number }>(
    `SELECT date_trunc('month', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month, count(*)::int AS rows
       FROM stock_movement WHERE actor = 'history' GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((row) => [row.month.toISOString(), row.rows]));
}

async function keptSince(): Promise<(Date | null)[]> {
  const { rows } = await ctx.db.pool.query<{ keptSince: Date | null }>(
    'SELECT kept_since AS "keptSince" FROM ledger_horizon',
  );
  return rows.map((row) => row.keptSince);
}

function stockOf(query: string): request.Test {
  return request(ctx.app).get(`/v1/stock?${query}`).set('Authorization', bearer()).set('Accept', 'application/json');
}

async function feedPage(): Promise<unknown> {
  const response = await request(ctx.app).get('/v1/events?limit=1000').set('Authorization', bearer());
  expect(response.status).toBe(200);
  return response.body;
}

describe('the ledger by month (D34)', () => {
  let unitPKey: string;
  let sku: string;

  beforeAll(async () => {
    await givenLedgerMonthsSince();
    sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const transportUnit = await givenTransportUnitOn(ctx.app, location.locationId);
    const [unit] = await givenUnitsIn(ctx.app, transportUnit, '1', sku, [{ quantity: pc(5) }]);
    unitPKey = unit!.pKey;
  });

  it('creates the parts of the current month and the next two ahead of time', async () => {
    await runRetention();

    const parts = await listLedgerParts(ctx.db.pool);
    expect(parts.slice(-3).map((part) => [part.from, part.to])).toEqual([
      [monthStart(0), monthStart(1)],
      [monthStart(1), monthStart(2)],
      [monthStart(2), monthStart(3)],
    ]);
  });

  it('keeps every month without LEDGER_RETENTION_MONTHS', async () => {
    const before = await ledgerRowsByMonth();

    await runRetention();

    expect(Object.keys(before)).toHaveLength(OLD_MONTHS + 1);
    expect(await ledgerRowsByMonth()).toEqual(before);
    expect(await keptSince()).toEqual([null]);
  });

  it('drops the months before the kept ones whole, records where history starts, and leaves stock and the feed as they were', async () => {
    const before = await ledgerRowsByMonth();
    const unit = await call(ctx.app, 'get', `/v1/packaging-units/${unitPKey}`);
    const movements = await call(ctx.app, 'get', `/v1/packaging-units/${unitPKey}/movements`);
    const feed = await feedPage();
    const stock = await stockOf(`sku=${sku}`);
    const keptInstant = new Date(monthStart(-3).getTime() + 1000).toISOString();
    const stockThen = await stockOf(`sku=${sku}&at=${keptInstant}`);

    await runRetention({ ledgerRetentionMonths: 3 });

    const kept = Object.fromEntries(Object.entries(before).filter(([month]) => month >= monthStart(-3).toISOString()));
    expect(Object.keys(kept)).toHaveLength(3);
    expect(await ledgerRowsByMonth()).toEqual(kept);
    expect((await listLedgerParts(ctx.db.pool))[0]).toMatchObject({ from: monthStart(-3) });
    expect(await keptSince()).toEqual([monthStart(-3)]);
    const unitAfter = await call(ctx.app, 'get', `/v1/packaging-units/${unitPKey}`);
    const movementsAfter = await call(ctx.app, 'get', `/v1/packaging-units/${unitPKey}/movements`);
    expect([unitAfter.status, unitAfter.body]).toEqual([200, unit.body]);
    expect([movementsAfter.status, movementsAfter.body]).toEqual([200, movements.body]);
    expect(await feedPage()).toEqual(feed);
    const stockAfter = await stockOf(`sku=${sku}`);
    expect([stockAfter.status, { ...stockAfter.body, asOf: undefined }]).toEqual([
      200,
      { ...stock.body, asOf: undefined },
    ]);
    expect(stock.body).toMatchObject({ onHand: pc(5) });
    const stockThenAfter = await stockOf(`sku=${sku}&at=${keptInstant}`);
    expect([stockThenAfter.status, stockThenAfter.body]).toEqual([200, stockThen.body]);
    const expired = await stockOf(`sku=${sku}&at=${new Date(monthStart(-3).getTime() - 1).toISOString()}`);
    expect([expired.status, expired.body.messageKey]).toEqual([410, 'owms.wms.inv.stock.historyExpired']);
  });

  it('drops a month that a reader holds for longer than one lock wait, once the reader lets go', async () => {
    const [oldest] = await listLedgerParts(ctx.db.pool);
    expect(oldest).toMatchObject({ from: monthStart(-3) });
    const reader = await ctx.db.pool.connect();
    await reader.query('BEGIN');
    await reader.query(`SELECT count(*) FROM ${oldest!.name}`);
    // Longer than the 200 ms a drop waits for its lock: the first attempt times out.
    const letGo = new Promise((resolve) => setTimeout(resolve, 600)).then(async () => {
      await reader.query('ROLLBACK');
      reader.release();
    });

    await runRetention({ ledgerRetentionMonths: 2 });
    await letGo;

    expect((await listLedgerParts(ctx.db.pool))[0]).toMatchObject({ from: monthStart(-2) });
    expect(await keptSince()).toEqual([monthStart(-2)]);
  });

  it('refuses to change or delete a ledger row of a kept month', async () => {
    await expect(ctx.db.pool.query(`DELETE FROM stock_movement WHERE actor = 'history'`)).rejects.toMatchObject({
      code: '42501',
      message: 'stock_movement is append-only',
    });
  });
});

describe('ended reservations (D34)', () => {
  async function reserve(sku: string): Promise<string> {
    const response = await allocate(ctx.app, { sku, qty: pc(1) });
    expect(response.status).toBe(200);
    return (response.body as AllocationElement[])[0]!.reservationId;
  }

  async function endedDaysAgo(reservationId: string, days: number): Promise<void> {
    expect((await release(ctx.app, reservationId)).status).toBe(204);
    await ctx.db.pool.query(
      `WITH parts AS (
         UPDATE reservation SET released_at = now() - $2 * interval '1 day' WHERE reservation_id = $1
       )
       UPDATE reservation_life SET ended_at = now() - $2 * interval '1 day' WHERE reservation_id = $1`,
      [reservationId, days],
    );
  }

  async function reservationRows(reservationId: string): Promise<number> {
    const { rows } = await ctx.db.pool.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM reservation WHERE reservation_id = $1',
      [reservationId],
    );
    return rows[0]!.count;
  }

  it('deletes reservations ended longer ago than RESERVATION_RETENTION_DAYS (90), and keeps the others', async () => {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const transportUnit = await givenTransportUnitOn(ctx.app, location.locationId);
    await givenUnitsIn(ctx.app, transportUnit, '1', sku, [{ quantity: pc(5) }]);
    const [expired, recent, active] = [await reserve(sku), await reserve(sku), await reserve(sku)];
    await endedDaysAgo(expired!, 91);
    await endedDaysAgo(recent!, 89);

    await runRetention();

    expect([await reservationRows(expired!), await reservationRows(recent!), await reservationRows(active!)]).toEqual([
      0, 1, 1,
    ]);
    expect((await release(ctx.app, expired!)).status).toBe(404);
    expect((await release(ctx.app, recent!)).status).toBe(204);
    expect((await release(ctx.app, active!)).status).toBe(204);
  });
});
