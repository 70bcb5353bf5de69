import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { ReservationExpiry } from '../../src/reservations/expiry.js';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { allocate, call, givenLocation, pc, toleratePoolTeardown } from '../support/stock-api.js';
import { allViolations, reservationViolations, stockLevelViolations, totalsOf } from '../support/stock-invariants.js';
import { getReservation, givenReservation, pcOf, pick } from './reservation-api.js';

/**
 * D40: a reservation is EXPIRED the moment its expiry passes, for every reader and writer, before the expiry work
 * has ended it; that work ends many due at once set-wise, each exactly once, on one instance or several.
 */
const ctx = useTestApp();
const logger = pino({ level: 'silent' });
// 5,000 keep the file within CI's time on a busy machine; EXPIRY_TEST_RESERVATIONS=50000 runs the figure.
const MASS = Number(process.env.EXPIRY_TEST_RESERVATIONS ?? 5_000);

const pools: pg.Pool[] = [];
function instancePool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: ctx.db.url, max: 2 });
  toleratePoolTeardown(pool);
  pools.push(pool);
  return pool;
}
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Arranged directly, as the API takes no expiry in the past: the reservation expired `ms` ago. */
async function expiredAgo(reservationId: string, ms: number): Promise<string> {
  const { rows } = await ctx.db.pool.query<{ expiresAt: Date }>(
    `UPDATE reservation_life SET expires_at = now() - $2 * interval '1 millisecond' WHERE reservation_id = $1
     RETURNING expires_at AS "expiresAt"`,
    [reservationId, ms],
  );
  return rows[0]!.expiresAt.toISOString();
}

async function endings(reservationIds: readonly string[]): Promise<{ ledger: number; events: number }> {
  const { rows } = await ctx.db.pool.query<{ ledger: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM stock_movement WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS ledger,
            (SELECT count(*)::int FROM event_outbox
              WHERE type = 'allocation.event.expired' AND resource_key = ANY($1::text[])) AS events`,
    [reservationIds],
  );
  return rows[0]!;
}

async function stockOf(sku: string, query = ''): Promise<Record<string, unknown>> {
  const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}${query}`).set('Accept', 'application/json');
  expect(response.status).toBe(200);
  return response.body as Record<string, unknown>;
}

describe('a reservation past its expiry, before the expiry work ran', () => {
  it('reads EXPIRED, ended at its expiry, and refuses a pick and a goods issue with 409 notActive', async () => {
    const given = await givenReservation(ctx, [6], 4, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    const expiresAt = await expiredAgo(given.reservationId, 100);

    const read = await getReservation(ctx, given.reservationId);
    const picked = await pick(ctx, given.reservationId, { pKey: given.units[0]!.pKey, qty: pcOf(1), target });
    const issued = await call(ctx.app, 'post', `/allocation/reservations/${given.reservationId}/issue`);
    const listed = await call(ctx.app, 'get', `/allocation/reservations?sku=${given.sku}&state=EXPIRED`);

    expect([read.state, read.expiresAt, read.endedAt]).toEqual(['EXPIRED', expiresAt, expiresAt]);
    for (const refused of [picked, issued]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        messageKey: 'owms.wms.inv.res.notActive',
        obj: [given.reservationId, 'EXPIRED'],
      });
    }
    expect((listed.body as { reservationId: string }[]).map((r) => r.reservationId)).toEqual([given.reservationId]);
    // Nothing was ended or moved by the refusals: the unit still carries the reservation until the work runs.
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '6', reserved: '4', units: 1 });
    expect(await endings([given.reservationId])).toEqual({ ledger: 0, events: 0 });
  });

  it('counts its goods available and not reserved in the stock levels, in total and by place', async () => {
    const given = await givenReservation(ctx, [6], 4, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const before = await stockOf(given.sku);
    await expiredAgo(given.reservationId, 100);

    const after = await stockOf(given.sku);
    const byLocation = await stockOf(given.sku, '&by=location');
    const list = await call(ctx.app, 'get', '/v1/stock?limit=1000').set('Accept', 'application/json');

    expect([before.reserved, before.available]).toEqual([pc(4), pc(2)]);
    expect([after.onHand, after.reserved, after.available]).toEqual([pc(6), pc(0), pc(6)]);
    const rows = byLocation.rows as { reserved: unknown; available: unknown }[];
    expect(rows.map((row) => [row.reserved, row.available])).toEqual([[pc(0), pc(6)]]);
    const inList = (list.body as { sku: string; reserved: unknown; available: unknown }[]).find(
      (row) => row.sku === given.sku,
    );
    expect([inList?.reserved, inList?.available]).toEqual([pc(0), pc(6)]);
  });

  it('shows its goods free on the unit: GET with a new tag, the unit list, and the same once the work ended it', async () => {
    const given = await givenReservation(ctx, [6], 6, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const unitPath = `/v1/packaging-units/${given.units[0]!.pKey}`;
    const before = await call(ctx.app, 'get', unitPath).set('Accept', 'application/json');
    const listedBefore = await call(ctx.app, 'get', `/v1/packaging-units?sku=${given.sku}`);
    await expiredAgo(given.reservationId, 100);

    const due = await call(ctx.app, 'get', unitPath).set('Accept', 'application/json');
    const listedDue = await call(ctx.app, 'get', `/v1/packaging-units?sku=${given.sku}`);
    await withTransaction(ctx.db.pool, (tx) => expireDue(tx, { subject: 'test', requestId: 'expire' }, 1000));
    const ended = await call(ctx.app, 'get', unitPath).set('Accept', 'application/json');

    expect([before.status, due.status, ended.status]).toEqual([200, 200, 200]);
    expect(before.body.qtyAvailable).toEqual(aQuantity(0, 'PC'));
    expect(due.body.qtyAvailable).toEqual(pcOf(6));
    expect(due.headers.etag).not.toBe(before.headers.etag);
    expect((listedBefore.body as unknown[]).length).toBe(0);
    expect((listedDue.body as { pKey: string; qtyAvailable: unknown }[]).map((u) => [u.pKey, u.qtyAvailable])).toEqual([
      [given.units[0]!.pKey, pcOf(6)],
    ]);
    expect(ended.body).toEqual({ ...due.body, ol: due.body.ol + 1 });
    const { rows } = await ctx.db.pool.query(
      "SELECT resource FROM event_outbox WHERE request_id = 'expire' AND type = 'pu.event.changed' AND resource_key = $1",
      [given.units[0]!.pKey],
    );
    expect(rows.map((row) => row.resource.qtyAvailable)).toEqual([pcOf(6)]);
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '6', reserved: '0', units: 1 });
  });

  it('lets an allocation take its goods, ending it first as expired, never reserving them twice', async () => {
    const given = await givenReservation(ctx, [6], 4, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await expiredAgo(given.reservationId, 100);

    const [first, second] = await Promise.all([
      allocate(ctx.app, { sku: given.sku, qty: pcOf(5) }, '?allowPartial=false'),
      allocate(ctx.app, { sku: given.sku, qty: pcOf(5) }, '?allowPartial=false'),
    ]);

    // 6 PC in all: one of the two gets 5, the other is short (1 PC left).
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '6', reserved: '5', units: 1 });
    expect(await endings([given.reservationId])).toEqual({ ledger: 1, events: 1 });
    const { rows } = await ctx.db.pool.query(
      `SELECT actor, trim_scale(reserved_before)::text AS b, trim_scale(reserved_after)::text AS a
         FROM stock_movement WHERE reservation_id = $1 AND kind = 'EXPIRE'`,
      [given.reservationId],
    );
    expect(rows).toEqual([{ actor: 'system:reservation-expiry', b: '4', a: '0' }]);
    expect((await getReservation(ctx, given.reservationId)).state).toBe('EXPIRED');
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });
});

/**
 * `count` reservations of 1 PC each, spread over units of 1,000 PC of one Product, all falling due at one instant
 * (`dueAt`, or when they were all there if that was later); written with SQL, as the API would take minutes to make 50,000.
 */
async function givenDueTogether(count: number): Promise<{ sku: string; ids: string[]; dueAt: Date }> {
  const units = Math.ceil(count / 1000);
  const given = await givenReservation(
    ctx,
    Array.from({ length: units }, () => 1000),
    1,
  );
  await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`).expect(204);
  const { rows } = await ctx.db.pool.query<{ id: string }>(
    `WITH unit AS (
       SELECT pu.id, pu.p_key, pu.product_id, row_number() OVER (ORDER BY pu.id) - 1 AS n
         FROM packaging_unit pu JOIN product p ON p.id = pu.product_id WHERE p.sku = $1
     ), made AS (
       SELECT gen_random_uuid() AS reservation_id, i FROM generate_series(0, $2 - 1) AS i
     ), life AS (
       INSERT INTO reservation_life (reservation_id, product_id, qty_base, expires_at)
       SELECT m.reservation_id, (SELECT product_id FROM unit LIMIT 1), 1, now() + interval '1 day'
         FROM made m ORDER BY m.i
       RETURNING reservation_id, expires_at
     ), part AS (
       INSERT INTO reservation (reservation_id, packaging_unit_id, packaging_unit_pkey, qty_base, actor, request_id)
       SELECT m.reservation_id, u.id, u.p_key, 1, 'test', 'seed' FROM made m JOIN unit u ON u.n = m.i / 1000
     ), reserved AS (
       UPDATE packaging_unit pu SET reserved_base = reserved_base + c.n
         FROM (SELECT u.id, count(*) AS n FROM made m JOIN unit u ON u.n = m.i / 1000 GROUP BY u.id) c
        WHERE pu.id = c.id
     )
     SELECT reservation_id AS id FROM life`,
    [given.sku, count],
  );
  const ids = rows.map((row) => row.id);
  // Brought forward once all are there (seeding takes seconds), all to the same instant.
  const due = await ctx.db.pool.query<{ dueAt: Date }>(
    `WITH due AS (UPDATE reservation_life SET expires_at = date_trunc('milliseconds', now()) + interval '1 second'
                   WHERE reservation_id = ANY($1::uuid[]) RETURNING expires_at)
     SELECT max(expires_at) AS "dueAt" FROM due`,
    [ids],
  );
  // The bound counts from the expiry, or from when the reservations were there, if that was later.
  const dueAt = new Date(Math.max(due.rows[0]!.dueAt.getTime(), Date.now()));
  return { sku: given.sku, ids, dueAt };
}

describe.each([1, 3])('%i instance(s) with many reservations falling due at the same instant', (instances) => {
  it(`ends all ${MASS} within 10 s of their expiry, each exactly once, stock conserved`, async () => {
    const { sku, ids, dueAt } = await givenDueTogether(MASS);
    const workers = Array.from({ length: instances }, () => new ReservationExpiry(instancePool(), logger));
    try {
      for (let waited = 0; ; waited += 250) {
        const { rows } = await ctx.db.pool.query(
          "SELECT count(*)::int AS n FROM reservation_life WHERE reservation_id = ANY($1::uuid[]) AND state = 'ACTIVE'",
          [ids],
        );
        if (rows[0].n === 0 || waited > 30_000) break;
        await sleep(250);
      }
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }

    const { rows } = await ctx.db.pool.query<{ states: string; late: number; once: boolean; events: boolean }>(
      `SELECT (SELECT string_agg(DISTINCT state || '@' || (ended_at = expires_at), ',') FROM reservation_life
                WHERE reservation_id = ANY($1::uuid[])) AS states,
              (SELECT extract(epoch FROM max(occurred_at) - $2::timestamptz)::float FROM stock_movement
                WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS late,
              (SELECT count(*) = $3 AND count(DISTINCT reservation_id) = $3 FROM stock_movement
                WHERE kind = 'EXPIRE' AND reservation_id = ANY($1::uuid[])) AS once,
              (SELECT count(*) = $3 AND count(DISTINCT resource_key) = $3 FROM event_outbox
                WHERE type = 'allocation.event.expired' AND resource_key = ANY($1::text[])) AS events`,
      [ids, dueAt, ids.length],
    );
    expect(rows[0]).toMatchObject({ states: 'EXPIRED@true', once: true, events: true });
    expect(rows[0]!.late).toBeLessThan(10);
    expect(await totalsOf(ctx.db.pool, sku)).toMatchObject({
      qty: String(Math.ceil(MASS / 1000) * 1000),
      reserved: '0',
    });
    // The seeded reservations have no RESERVE rows, so the ledger's own checks do not apply here.
    expect([...(await reservationViolations(ctx.db.pool)), ...(await stockLevelViolations(ctx.db.pool))]).toEqual([]);
  }, 90_000);
});
