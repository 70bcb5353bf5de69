import fc from 'fast-check';
import type { Express } from 'express';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { EXPIRY_ACTOR, expireDue } from '../../src/reservations/service.js';
import { expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  expectStatus,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  release,
  type AllocationElement,
} from '../support/stock-api.js';

/**
 * D40: `at=` answers only committed states, every stock reading names the last event it includes (`feedCursor`),
 * and the list reads as one snapshot with `asOf`. Checked against an independent replay of the feed: each
 * PackagingUnit event carries the unit as it then was, so a SKU's onHand and reserved up to a cursor are the sums
 * over the last state of each of its units.
 */
const ctx = useTestApp();

interface FeedEvent {
  type: string;
  requestId: string | null;
  cursor: string;
  resource: {
    pKey?: string;
    product?: { sku: string };
    quantity?: { magnitude: number };
    qtyAvailable?: { magnitude: number };
  };
}

interface Figures {
  onHand: number;
  reserved: number;
}

async function wholeFeed(app: Express): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let after = '0'; ;) {
    const response = await call(app, 'get', `/v1/events?after=${after}&limit=1000`);
    expectStatus(response, 200, 'feed');
    const page = response.body as { events: FeedEvent[]; next: string };
    events.push(...page.events);
    if (page.events.length === 0) return events;
    after = page.next;
  }
}

/** The SKU's figures after replaying the feed up to and including `cursor`. */
function replay(events: readonly FeedEvent[], sku: string, cursor: number): Figures {
  const units = new Map<string, Figures>();
  for (const event of events) {
    if (Number(event.cursor) > cursor) break;
    const unit = event.resource;
    if (!event.type.startsWith('pu.event.') || unit.product?.sku !== sku) continue;
    if (event.type === 'pu.event.deleted') units.delete(unit.pKey!);
    else {
      const onHand = unit.quantity!.magnitude;
      units.set(unit.pKey!, { onHand, reserved: onHand - unit.qtyAvailable!.magnitude });
    }
  }
  return [...units.values()].reduce(
    (sum, unit) => ({ onHand: sum.onHand + unit.onHand, reserved: sum.reserved + unit.reserved }),
    {
      onHand: 0,
      reserved: 0,
    },
  );
}

/** Requests whose events lie on both sides of the cursor: a transaction cut in two. */
function cutAt(events: readonly FeedEvent[], cursor: number): string[] {
  const before = new Set(events.filter((e) => Number(e.cursor) <= cursor && e.requestId).map((e) => e.requestId));
  return [
    ...new Set(events.filter((e) => Number(e.cursor) > cursor && before.has(e.requestId)).map((e) => e.requestId!)),
  ];
}

const magnitude = (quantity: unknown): number => (quantity as { magnitude: number }).magnitude;

type Step =
  | { kind: 'intake'; units: number; qty: number }
  | { kind: 'allocate'; qty: number }
  | { kind: 'release' }
  | { kind: 'issue' }
  | { kind: 'pick'; qty: number }
  | { kind: 'expire' }
  | { kind: 'move' };

// Weighted so that most runs allocate after an intake, and then pick from, expire and end what they reserved.
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('intake' as const),
      units: fc.integer({ min: 1, max: 40 }),
      qty: fc.integer({ min: 1, max: 5 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('allocate' as const), qty: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('issue' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pick' as const), qty: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('expire' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const) }) },
);

interface Warehouse {
  sku: string;
  tu: string;
  locationId: string;
  units: string[];
  reservations: string[];
  started: { requestId: string; at: number }[];
}

/** Allocates `qty` of the SKU as a request of its own; answers the reservation made, if any. */
async function reserve(w: Warehouse, qty: number): Promise<string | undefined> {
  const at = Date.now();
  const response = await allocate(ctx.app, { sku: w.sku, qty: pc(qty) });
  w.started.push({ requestId: response.headers['x-request-id'] as string, at });
  if (response.status !== 200) return undefined;
  const [id] = new Set((response.body as AllocationElement[]).map((e) => e.reservationId));
  w.reservations.push(id!);
  return id;
}

async function perform(w: Warehouse, step: Step, writer: number, index: number): Promise<void> {
  const at = Date.now();
  let requestId: string | undefined;
  if (step.kind === 'intake') {
    const created = await givenUnitsIn(
      ctx.app,
      w.tu,
      `W${writer}-${index}-${at}`,
      w.sku,
      Array.from({ length: step.units }, () => ({ quantity: pc(step.qty) })),
    );
    w.units.push(...created.map((unit) => unit.pKey));
    return;
  }
  if (step.kind === 'allocate') {
    await reserve(w, step.qty);
    return;
  } else if (step.kind === 'pick') {
    // Part of the first unit the reservation holds goes to the Location; what was picked stays reserved. Without
    // a reservation of its own the writer makes one first, so picks happen whatever order the writers run in.
    const id = w.reservations[index % Math.max(1, w.reservations.length)] ?? (await reserve(w, step.qty));
    if (id === undefined) return;
    const read = await call(ctx.app, 'get', `/allocation/reservations/${id}`);
    const held = (read.body as { units?: { pKey: string; qty: { magnitude: number } }[] }).units?.[0];
    if (held === undefined) return;
    const response = await call(ctx.app, 'post', `/allocation/reservations/${id}/picks`).send({
      pKey: held.pKey,
      qty: pc(Math.min(step.qty, held.qty.magnitude)),
      target: { locationId: w.locationId },
    });
    requestId = response.headers['x-request-id'] as string;
  } else if (step.kind === 'expire') {
    // Falls due now (arranged: the API takes no expiry in the past), then ended as the background work ends it.
    if (w.reservations.length === 0) await reserve(w, 2);
    const id = w.reservations.shift();
    if (id === undefined) return;
    await ctx.db.pool.query(
      "UPDATE reservation_life SET expires_at = now() WHERE reservation_id = $1 AND state = 'ACTIVE'",
      [id],
    );
    // A release, pick or issue holding its lock makes the work skip it once: it tries again, as the next run would.
    // Each round is a transaction of its own, so each has its own request id.
    for (let round = 0; round < 100; round++) {
      const actor = { subject: EXPIRY_ACTOR, requestId: `expiry-${writer}-${index}-${at}-${round}` };
      w.started.push({ requestId: actor.requestId, at: Date.now() });
      await withTransaction(ctx.db.pool, (tx) => expireDue(tx, actor, 1000));
      const { rows } = await ctx.db.pool.query('SELECT state FROM reservation_life WHERE reservation_id = $1', [id]);
      if (rows[0]?.state !== 'ACTIVE') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return;
  } else if (step.kind === 'release' || step.kind === 'issue') {
    const id = w.reservations.shift();
    if (id === undefined) return;
    const response =
      step.kind === 'release'
        ? await release(ctx.app, id)
        : await call(ctx.app, 'post', `/allocation/reservations/${id}/issue`);
    requestId = response.headers['x-request-id'] as string;
  } else {
    const pKey = w.units[index % Math.max(1, w.units.length)];
    if (pKey === undefined) return;
    const response = await call(ctx.app, 'put', `/v1/packaging-units/${pKey}`).send({
      actualLocation: { locationId: w.locationId },
    });
    requestId = response.headers['x-request-id'] as string;
  }
  w.started.push({ requestId, at });
}

describe('stock by commit and the feed cursor (D40)', () => {
  it('answers at every instant, inside and between transactions, exactly the replay of the feed up to its feedCursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(stepArbitrary, { minLength: 3, maxLength: 8 }), { minLength: 3, maxLength: 3 }),
        async (writers) => {
          const sku = await givenProduct(ctx.app);
          const { locationId } = await givenLocation(ctx.app);
          const w: Warehouse = {
            sku,
            tu: await givenTransportUnitOn(ctx.app, locationId),
            locationId,
            units: [],
            reservations: [],
            started: [],
          };
          // Stock from the start, so that allocations, picks and expiries have something to work on at once.
          await perform(w, { kind: 'intake', units: 4, qty: 5 }, writers.length, 0);
          const instants: string[] = [];
          const snapshots: { cursor: number; items: Map<string, Figures> }[] = [];
          let running = true;
          const sampler = (async () => {
            while (running) {
              instants.push(new Date().toISOString());
              if (instants.length % 5 === 0) snapshots.push(await listSnapshot());
              await new Promise((resolve) => setTimeout(resolve, 7));
            }
          })();
          await Promise.all(
            writers.map(async (steps, writer) => {
              for (const [index, step] of steps.entries()) await perform(w, step, writer, index);
            }),
          );
          running = false;
          await sampler;
          // A current reading waits until every change it holds is numbered: then the feed is complete.
          const now = await call(ctx.app, 'get', `/v1/stock?sku=${sku}`);
          expectStatus(now, 200, 'stock now');
          const events = await wholeFeed(ctx.app);
          const nowCursor = Number((now.body as { feedCursor: string }).feedCursor);
          expect({ onHand: magnitude(now.body.onHand), reserved: magnitude(now.body.reserved) }).toEqual(
            replay(events, sku, nowCursor),
          );

          for (const instant of instants) {
            const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}&at=${encodeURIComponent(instant)}`);
            expectStatus(response, 200, `stock at ${instant}`);
            const body = response.body as { onHand: unknown; reserved: unknown; feedCursor: string };
            const cursor = Number(body.feedCursor);
            expect({ instant, onHand: magnitude(body.onHand), reserved: magnitude(body.reserved) }).toEqual({
              instant,
              ...replay(events, sku, cursor),
            });
            expect(cutAt(events, cursor)).toEqual([]);
            const later = w.started
              .filter((request) => request.at > Date.parse(instant))
              .map((request) => request.requestId);
            expect(
              events.filter((e) => later.includes(e.requestId!) && Number(e.cursor) <= cursor).map((e) => e.cursor),
            ).toEqual([]);
          }
          for (const snapshot of snapshots) {
            for (const [listed, figures] of snapshot.items) {
              if (listed === sku)
                expect({ cursor: snapshot.cursor, ...figures }).toEqual({
                  cursor: snapshot.cursor,
                  ...replay(events, sku, snapshot.cursor),
                });
            }
            expect(cutAt(events, snapshot.cursor)).toEqual([]);
          }
        },
      ),
      // Seeded, as the other property tests are; FEED_CURSOR_SEED and FEED_CURSOR_RUNS explore further.
      {
        numRuns: Number(process.env.FEED_CURSOR_RUNS ?? 3),
        seed: Number(process.env.FEED_CURSOR_SEED ?? 20_261_129),
        endOnFailure: true,
      },
    );
  }, 300_000);
});

/** Every page of the list, one Product a page, read as of the first page's feedCursor. */
async function listSnapshot(): Promise<{ cursor: number; items: Map<string, Figures> }> {
  const first = await call(ctx.app, 'get', '/v1/stock?limit=1');
  expectStatus(first, 200, 'list');
  const firstItems = first.body as { sku: string; onHand: unknown; reserved: unknown; feedCursor: string }[];
  const cursor = firstItems[0]!.feedCursor;
  const items = new Map<string, Figures>();
  let next: string | undefined = `/v1/stock?limit=1&asOf=${cursor}`;
  while (next) {
    const page = await call(ctx.app, 'get', next);
    expectStatus(page, 200, `list ${next}`);
    for (const item of page.body as {
      sku: string;
      onHand: unknown;
      reserved: unknown;
      feedCursor: string;
      available?: unknown;
    }[]) {
      expect(item.feedCursor).toBe(cursor);
      expect(item.available).toBeUndefined();
      items.set(item.sku, { onHand: magnitude(item.onHand), reserved: magnitude(item.reserved) });
    }
    const link = /^<([^>]+)>; rel="next"$/.exec((page.headers.link as string | undefined) ?? '')?.[1];
    next = link === undefined ? undefined : new URL(link).pathname + new URL(link).search;
  }
  return { cursor: Number(cursor), items };
}

describe('GET /v1/stock after a change that wrote no event', () => {
  it('answers the figures with a feedCursor instead of waiting for a numbering that never comes', async () => {
    const sku = await givenProduct(ctx.app);
    await ctx.db.pool.query(
      `INSERT INTO stock_movement (packaging_unit_pkey, product_id, kind, base_code, qty_before, qty_after,
                                   reserved_before, reserved_after, actor)
       SELECT gen_random_uuid(), id, 'MOVE', 'PC', 1, 1, 0, 0, 'test' FROM product WHERE sku = $1`,
      [sku],
    );
    const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}`);
    expectStatus(response, 200, 'stock');
    expect(response.body).toMatchObject({ onHand: pc(0), feedCursor: expect.stringMatching(/^\d+$/) });
  });
});

describe('GET /v1/stock with asOf, bad input', () => {
  it('answers 400 naming asOf for what is no feedCursor, or one this service never answered', async () => {
    expectValidationError(await call(ctx.app, 'get', '/v1/stock?asOf=abc'), [
      ['asOf', 'must be a feedCursor this service answered'],
    ]);
    expectValidationError(await call(ctx.app, 'get', '/v1/stock?asOf=999999999'), [
      ['asOf', 'is not a feedCursor this service answered: 999999999'],
    ]);
  });

  it('answers 400 for asOf together with at, or with sku', async () => {
    expectValidationError(await call(ctx.app, 'get', '/v1/stock?sku=X&at=2024-01-01T00:00:00Z&asOf=0'), [
      ['asOf', 'cannot be combined with at: at is an instant, asOf a feedCursor'],
    ]);
    expectValidationError(await call(ctx.app, 'get', '/v1/stock?sku=X&asOf=0'), [
      ['asOf', 'pages the list of every Product and is not taken with sku'],
    ]);
  });

  it('answers 410 for a feedCursor whose history is no longer kept, and the same page while it is', async () => {
    const sku = await givenProduct(ctx.app);
    const { locationId } = await givenLocation(ctx.app);
    await givenUnitsIn(ctx.app, await givenTransportUnitOn(ctx.app, locationId), 'OLD', sku, [{ quantity: pc(2) }]);
    const first = await call(ctx.app, 'get', '/v1/stock?limit=1');
    const cursor = (first.body as { feedCursor: string }[])[0]!.feedCursor;
    expectStatus(await call(ctx.app, 'get', `/v1/stock?limit=1&asOf=${cursor}`), 200, 'kept');
    await ctx.db.pool.query('DELETE FROM feed_boundary WHERE position <= $1', [cursor]);
    const gone = await call(ctx.app, 'get', `/v1/stock?limit=1&asOf=${cursor}`);
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ messageKey: 'owms.wms.inv.stock.historyExpired', obj: [cursor] });
  });
});
