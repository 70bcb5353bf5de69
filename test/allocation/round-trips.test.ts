import type { Express } from 'express';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { givenReservation, pcOf } from '../reservations/reservation-api.js';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  expectStatus,
  givenDivided,
  givenLocation,
  givenTransportUnitOn,
  unique,
  type AllocationElement,
} from '../support/stock-api.js';

/**
 * Issue 38: the statements an allocation and a pick send inside their transaction, BEGIN and COMMIT not counted,
 * each a round trip to PostgreSQL. They run on an app of their own whose pool records what its clients send; the
 * file's app (and the events runtime on the file's pool) arranges the data, and is not counted.
 */
const ctx = useTestApp();
let counted: pg.Pool;
let app: Express;
let sent: string[] = [];

/** What one client sent, as its statement's name or first words. */
function recordQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const statement = args[0] as string | { name?: string; text: string };
    sent.push(typeof statement === 'string' ? statement : (statement.name ?? statement.text));
    return query(...args);
  };
}

/** The statements sent between the last BEGIN and the COMMIT after it. */
function insideTransaction(): string[] {
  const begin = sent.findLastIndex((statement) => statement.startsWith('BEGIN'));
  const commit = sent.indexOf('COMMIT', begin);
  expect({ begin: begin >= 0, commit: commit > begin }).toEqual({ begin: true, commit: true });
  return sent.slice(begin + 1, commit).map((statement) => statement.trim().split('\n')[0]!.slice(0, 60));
}

beforeAll(() => {
  counted = new pg.Pool({ connectionString: ctx.db.url, max: 2 });
  counted.on('connect', recordQueries);
  app = createApp({ config: ctx.config, pool: counted, logger: pino({ level: 'silent' }), events: ctx.events });
});

afterAll(() => counted.end());

/** The statements a pick sends inside its transaction, once it answered 201. */
async function statementsOfPick(reservationId: string, body: object): Promise<string[]> {
  sent = [];
  const response = await call(app, 'post', `/allocation/reservations/${reservationId}/picks`).send(body);
  expectStatus(response, 201, 'pick');
  return insideTransaction();
}

describe('round trips to PostgreSQL inside the transaction (BEGIN and COMMIT not counted)', () => {
  it('allocates across two units in one statement that locks and one that writes', async () => {
    const given = await givenReservation(ctx, [3, 10, 4], 1);
    sent = [];

    const response = await allocate(app, { sku: given.sku, qty: pcOf(5) });

    expectStatus(response, 200, 'allocate');
    expect((response.body as AllocationElement[]).map((element) => element.qtyAllocated)).toEqual([pcOf(5)]);
    expect(insideTransaction()).toEqual(['allocation-lock-candidates', 'allocation-reserve']);
  });

  it('picks part of a unit onto a Location in five statements', async () => {
    const given = await givenReservation(ctx, [3, 10], 5);
    const target = await givenLocation(ctx.app);
    expect(
      await statementsOfPick(given.reservationId, {
        pKey: given.units[1]!.pKey,
        qty: pcOf(1),
        target: { locationId: target.locationId },
      }),
    ).toEqual([
      'lock-reservation-and-parts',
      // the target Location, by an unnamed statement
      'SELECT l.id, l.p_key, l.location_id, l.erp_code, l.location_',
      'units-by-ids',
      'reduce-and-insert-split',
      'append-split-pick',
    ]);
  });

  it('picks a whole unit onto a Location in five statements', async () => {
    const given = await givenReservation(ctx, [3, 10], 3);
    const target = await givenLocation(ctx.app);
    expect(
      await statementsOfPick(given.reservationId, {
        pKey: given.units[0]!.pKey,
        qty: pcOf(3),
        target: { locationId: target.locationId },
      }),
    ).toEqual([
      'lock-reservation-and-parts',
      'SELECT l.id, l.p_key, l.location_id, l.erp_code, l.location_',
      'units-by-ids',
      'update-unit-holder',
      'append-whole-pick',
    ]);
  });

  it('picks part of a unit into a LoadUnit created on the spot in four statements', async () => {
    const given = await givenReservation(ctx, [3, 10], 3);
    expect(
      await statementsOfPick(given.reservationId, {
        pKey: given.units[0]!.pKey,
        qty: pcOf(1),
        target: { transportUnitBK: unique('TU'), luPos: '1', loadUnitType: 'CRATE' },
      }),
    ).toEqual([
      'lock-reservation-and-parts',
      // the target LoadUnit, created with its TransportUnit, then the unit, locked and read; the Product admitted
      'lock-pick-target-load-unit',
      'reduce-and-insert-split',
      'append-split-pick',
    ]);
  });

  it('picks a whole unit into an existing LoadUnit in four statements', async () => {
    const given = await givenReservation(ctx, [3, 10], 3);
    const { locationId } = await givenLocation(ctx.app);
    const target = await givenTransportUnitOn(ctx.app, locationId);
    await givenDivided(ctx.app, target, 2);
    expect(
      await statementsOfPick(given.reservationId, {
        pKey: given.units[0]!.pKey,
        qty: pcOf(3),
        target: { transportUnitBK: target, luPos: '2' },
      }),
    ).toEqual(['lock-reservation-and-parts', 'lock-pick-target-load-unit', 'update-unit-holder', 'append-whole-pick']);
  });
});
