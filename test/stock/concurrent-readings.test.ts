import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { allViolations } from '../support/stock-invariants.js';
import { smallest, stockLevelProblems } from '../support/stock-levels.js';
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
import type { QuantityJson } from '../support/builders.js';

/**
 * D31 under load: 8 writers move and allocate one SKU while a reader reads its stock levels. Every reading must be
 * a consistent snapshot (available ≤ onHand − reserved, reserved ≥ 0, onHand unchanged by moves), and afterwards
 * the figures equal the units and what allocation takes.
 */
const ctx = useTestApp();

const WRITERS = 8;
const ROUNDS = 12;
const LOAD_UNITS = 4;

interface Reading {
  onHand: QuantityJson;
  reserved: QuantityJson;
  available: QuantityJson;
}

describe('stock levels under 8 concurrent writers of one SKU', () => {
  it('are a consistent snapshot in every reading and equal the units afterwards', async () => {
    const sku = await givenProduct(ctx.app);
    const location = await givenLocation(ctx.app);
    const transportUnits = [
      await givenTransportUnitOn(ctx.app, location.locationId),
      await givenTransportUnitOn(ctx.app, location.locationId),
    ];
    const units: string[] = [];
    for (const bk of transportUnits) {
      for (let position = 1; position <= LOAD_UNITS / 2; position++) {
        const created = await givenUnitsIn(ctx.app, bk, String(position), sku, [
          { quantity: pc(20) },
          { quantity: pc(5) },
        ]);
        units.push(...created.map((unit) => unit.pKey));
      }
    }
    const seeded = new Decimal(25 * LOAD_UNITS);

    let writing = true;
    const problems: string[] = [];
    const statuses = new Map<string, number>();
    const count = (what: string, status: number | string): void =>
      void statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);

    // Movers take a unit (whole or part of it) to another LoadUnit; allocators reserve a little and release it.
    const mover = async (writer: number): Promise<void> => {
      for (let round = 0; round < ROUNDS; round++) {
        const unit = units[(writer * 7 + round) % units.length]!;
        const target = {
          transportUnitBK: transportUnits[(writer + round) % 2]!,
          physicalPosition: String(1 + (round % 2)),
        };
        const body = round % 3 === 0 ? { loadUnit: target } : { loadUnit: target, quantity: pc(1 + (round % 4)) };
        const response = await call(ctx.app, 'put', `/v1/packaging-units/${unit}`).send(body);
        // A unit another mover took to the target already is a 400 for this one (its stock is there).
        const samePlace = response.status === 400 && response.text.includes('is where the stock already is');
        count('move', samePlace ? 'to where it is' : response.status);
      }
    };
    const allocator = async (): Promise<void> => {
      for (let round = 0; round < ROUNDS; round++) {
        const response = await allocate(ctx.app, { sku, qty: pc(1 + (round % 6)) });
        count('allocate', response.status);
        const reservation = (response.body as AllocationElement[])[0]?.reservationId;
        if (reservation && round % 2 === 0) count('release', (await release(ctx.app, reservation)).status);
      }
    };
    const reader = async (): Promise<number> => {
      let readings = 0;
      while (writing) {
        const response = await call(ctx.app, 'get', `/v1/stock?sku=${sku}`);
        expectStatus(response, 200, 'stock reading');
        const { onHand, reserved, available } = response.body as Reading;
        const [hand, promised, free] = [smallest(onHand), smallest(reserved), smallest(available)];
        if (!hand.equals(seeded)) problems.push(`onHand ${String(hand)}, seeded ${String(seeded)}`);
        if (promised.lt(0)) problems.push(`reserved ${String(promised)}`);
        if (free.gt(hand.minus(promised)))
          problems.push(`available ${String(free)} > onHand ${String(hand)} - reserved ${String(promised)}`);
        readings += 1;
      }
      return readings;
    };

    const reading = reader();
    await Promise.all(Array.from({ length: WRITERS }, (_, writer) => (writer % 2 === 0 ? mover(writer) : allocator())));
    writing = false;
    const readings = await reading;

    expect(problems).toEqual([]);
    expect(readings).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((key) => !/ (2\d\d|to where it is)$/.test(key))).toEqual([]);
    expect(statuses.get('move 200')).toBeGreaterThan(0);
    expect(statuses.get('allocate 200')).toBeGreaterThan(0);
    expect(await stockLevelProblems(ctx.app, ctx.db.pool, sku, 'PC', null)).toEqual([]);
    expect(await allViolations(ctx.db.pool)).toEqual([]);
  }, 120_000);
});
