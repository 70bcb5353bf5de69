import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { ReservationExpiry } from '../../src/reservations/expiry.js';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import { allocate, call, givenLocation, toleratePoolTeardown } from '../support/stock-api.js';
import { allViolations, totalsOf } from '../support/stock-invariants.js';
import { getReservation, givenReservation, pcOf, pick, type GivenReservation } from './reservation-api.js';

/** D32: a reservation past its expiry ends within 10 s, by exactly one instance, after a restart too. */
const ctx = useTestApp();
const logger = pino({ level: 'silent' });
const actor = { subject: 'test', requestId: 'expiry-test' };

const pools: pg.Pool[] = [];
/** A pool of its own, as another instance of the service would have. */
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

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

/** Arranged directly: an expiry already passed, which the API refuses to take. */
async function givenExpired(reservationIds: readonly string[]): Promise<void> {
  await ctx.db.pool.query(
    "UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE reservation_id = ANY($1::uuid[])",
    [reservationIds],
  );
}

/** Ended by the expiry work, not only past its expiry (which a read shows as EXPIRED already, D40). */
async function endedInStore(reservationId: string): Promise<boolean> {
  const { rows } = await ctx.db.pool.query('SELECT state FROM reservation_life WHERE reservation_id = $1', [
    reservationId,
  ]);
  return rows[0]?.state === 'EXPIRED';
}

async function eventCounts(reservationIds: readonly string[]): Promise<Map<string, string[]>> {
  const { rows } = await ctx.db.pool.query<{ key: string; type: string }>(
    `SELECT resource_key AS key, type FROM event_outbox
      WHERE resource_key = ANY($1::text[]) AND type LIKE 'allocation.event.%' ORDER BY seq`,
    [reservationIds],
  );
  const byKey = new Map<string, string[]>(reservationIds.map((id) => [id, []]));
  for (const row of rows) byKey.get(row.key)!.push(row.type.replace('allocation.event.', ''));
  return byKey;
}

/** `count` reservations of 1 PC each of one Product with 100 PC in one unit, all due to expire when arranged so. */
async function givenReservationsOfOnePiece(count: number): Promise<{ given: GivenReservation; ids: string[] }> {
  const given = await givenReservation(ctx, [100], 1);
  const ids = [given.reservationId];
  while (ids.length < count) {
    const response = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1) });
    ids.push((response.body as { reservationId: string }[])[0]!.reservationId);
  }
  return { given, ids };
}

describe('reservation expiry', () => {
  it('ends a reservation within 10 s of its expiry: EXPIRED, stock available again, one expired event', async () => {
    const given = await givenReservation(ctx, [6], 4, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    // Brought forward once arranged: arranging takes seconds on a busy machine.
    const { rows: due } = await ctx.db.pool.query<{ expiresAt: Date }>(
      `UPDATE reservation_life SET expires_at = now() + interval '2 seconds' WHERE reservation_id = $1
       RETURNING expires_at AS "expiresAt"`,
      [given.reservationId],
    );
    const expiresAt = due[0]!.expiresAt.toISOString();
    const expiry = new ReservationExpiry(instancePool(), logger);
    try {
      await waitFor(async () => await endedInStore(given.reservationId), 12_000);
    } finally {
      await expiry.stop();
    }

    const expired = await getReservation(ctx, given.reservationId);
    expect(Date.parse(expired.endedAt!) - Date.parse(expiresAt)).toBeLessThan(10_000);
    expect(Date.parse(expired.endedAt!)).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '6', reserved: '0', units: 1 });
    expect((await eventCounts([given.reservationId])).get(given.reservationId)).toEqual(['reserved', 'expired']);
    const { rows } = await ctx.db.pool.query(
      "SELECT kind, trim_scale(reserved_before)::text AS b, trim_scale(reserved_after)::text AS a FROM stock_movement WHERE reservation_id = $1 AND kind = 'EXPIRE'",
      [given.reservationId],
    );
    expect(rows).toEqual([{ kind: 'EXPIRE', b: '4', a: '0' }]);
    const again = await allocate(ctx.app, { sku: given.sku, qty: pcOf(6), allowPartial: false });
    expect(again.status).toBe(200);

    const released = await call(ctx.app, 'delete', `/allocation/reservations/${given.reservationId}`);
    expect(released.status).toBe(204);
    expect((await getReservation(ctx, given.reservationId)).state).toBe('EXPIRED');
  });

  it('ends reservations whose expiry passed while no instance ran, once started again', async () => {
    const given = await givenReservation(ctx, [5], 5, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await givenExpired([given.reservationId]);
    const expiry = new ReservationExpiry(instancePool(), logger);
    try {
      await waitFor(async () => await endedInStore(given.reservationId), 10_000);
    } finally {
      await expiry.stop();
    }
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '5', reserved: '0', units: 1 });
  });

  it('lets exactly one of an expiry and a release end each reservation', async () => {
    const { given, ids } = await givenReservationsOfOnePiece(20);
    await givenExpired(ids);
    const pool = instancePool();

    const [releases] = await Promise.all([
      Promise.all(ids.map((id) => call(ctx.app, 'delete', `/allocation/reservations/${id}`))),
      (async () => {
        while ((await withTransaction(pool, (tx) => expireDue(tx, actor, 1))) > 0);
      })(),
    ]);

    expect(releases.map((response) => response.status)).toEqual(ids.map(() => 204));
    const events = await eventCounts(ids);
    for (const id of ids) {
      const ended = events.get(id)!;
      expect([
        ['reserved', 'released'],
        ['reserved', 'expired'],
      ]).toContainEqual(ended);
      expect((await getReservation(ctx, id)).state).toBe(ended[1] === 'released' ? 'RELEASED' : 'EXPIRED');
    }
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '100', reserved: '0', units: 1 });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  it('lets a pick either happen before the expiry or be refused after it, never after, stock conserved', async () => {
    const { given, ids } = await givenReservationsOfOnePiece(12);
    const parts = await Promise.all(ids.map((id) => getReservation(ctx, id)));
    const target = { locationId: (await givenLocation(ctx.app)).locationId };
    await givenExpired(ids);
    const pool = instancePool();

    const [picks] = await Promise.all([
      Promise.all(parts.map((r) => pick(ctx, r.reservationId, { pKey: r.units[0]!.pKey, qty: pcOf(1), target }))),
      (async () => {
        while ((await withTransaction(pool, (tx) => expireDue(tx, actor, 1))) > 0);
      })(),
    ]);
    while ((await withTransaction(pool, (tx) => expireDue(tx, actor, 1))) > 0);

    const events = await eventCounts(ids);
    for (const [index, id] of ids.entries()) {
      const status = picks[index]!.status;
      expect([201, 409]).toContain(status);
      expect(events.get(id)).toEqual(status === 201 ? ['reserved', 'picked', 'expired'] : ['reserved', 'expired']);
    }
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({
      qty: '100',
      reserved: '0',
      units: 1 + picks.filter((response) => response.status === 201).length,
    });
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  });

  // The issue asks for a minute; 20 s keep CI time in bounds and still see three instances race on every tick.
  it('has three instances expire reservations falling due every half second, each exactly once', async () => {
    const seconds = 20;
    const given = await givenReservation(ctx, [1000], 1, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const expiresAt = new Date(Date.now() + 120_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < seconds * 2; i += 1) {
      const response = await allocate(ctx.app, { sku: given.sku, qty: pcOf(1), expiresAt });
      ids.push((response.body as { reservationId: string }[])[0]!.reservationId);
    }
    // One falling due every half second from 2 s on, set once all are arranged (which takes seconds when busy).
    await ctx.db.pool.query(
      `UPDATE reservation_life r SET expires_at = now() + interval '2 seconds' + (v.n - 1) * interval '500 milliseconds'
         FROM unnest($1::uuid[]) WITH ORDINALITY AS v(id, n) WHERE r.reservation_id = v.id`,
      [ids],
    );
    const instances = [0, 1, 2].map(() => new ReservationExpiry(instancePool(), logger));
    try {
      await waitFor(
        async () => {
          const { rows } = await ctx.db.pool.query(
            "SELECT count(*)::int AS n FROM reservation_life WHERE reservation_id = ANY($1::uuid[]) AND state = 'EXPIRED'",
            [ids],
          );
          return rows[0].n === ids.length;
        },
        (seconds + 15) * 1000,
      );
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
    }

    const events = await eventCounts(ids);
    expect([...events.values()].filter((types) => types.join() !== 'reserved,expired')).toEqual([]);
    const { rows } = await ctx.db.pool.query(
      // ended_at is the expiry itself (D40); when the work ended each shows in its EXPIRE ledger row.
      `SELECT max(extract(epoch FROM m.occurred_at - r.expires_at))::float AS late,
              min(extract(epoch FROM m.occurred_at - r.expires_at))::float AS early
         FROM reservation_life r JOIN stock_movement m ON m.reservation_id = r.reservation_id AND m.kind = 'EXPIRE'
        WHERE r.reservation_id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows[0].early).toBeGreaterThanOrEqual(0);
    expect(rows[0].late).toBeLessThan(10);
    expect(await totalsOf(ctx.db.pool, given.sku)).toEqual({ qty: '1000', reserved: '1', units: 1 });
  }, 60_000);
});
