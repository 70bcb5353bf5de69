import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  call,
  givenDivided,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  toleratePoolTeardown,
} from '../support/stock-api.js';
import { allViolations, storedUnits, totalsOf } from '../support/stock-invariants.js';

/** D21: every move is one transaction and the sum of a Product's quantities is the same before and after. */
const ctx = useTestApp();
beforeAll(() => toleratePoolTeardown(ctx.db.pool));

interface Warehouse {
  sku: string;
  source: string;
  unitPKey: string;
  loadUnits: string[];
  locations: string[];
}

/** 100 PC in one unit in a LoadUnit; four empty LoadUnits on other TransportUnits; three Locations. */
async function warehouse(): Promise<Warehouse> {
  const sku = await givenProduct(ctx.app);
  const locations = [];
  for (let i = 0; i < 3; i++) locations.push((await givenLocation(ctx.app)).locationId);
  const source = await givenTransportUnitOn(ctx.app, locations[0]!);
  const [unit] = await givenUnitsIn(ctx.app, source, '1', sku, [{ quantity: pc(100) }]);
  const loadUnits = [];
  for (let i = 0; i < 4; i++) {
    const bk = await givenTransportUnitOn(ctx.app, locations[i % 3]!);
    await givenDivided(ctx.app, bk, 1);
    loadUnits.push(bk);
  }
  return { sku, source, unitPKey: unit!.pKey, loadUnits, locations };
}

type Shape = 'unit to LoadUnit' | 'unit to Location' | 'LoadUnit to LoadUnit' | 'LoadUnit to Location';

/** One partial move of 1 PC out of the source, in one of the four shapes that take stock out of a LoadUnit. */
function moveOnePiece(w: Warehouse, shape: Shape, i: number): Promise<Response> {
  const loadUnit = w.loadUnits[i % w.loadUnits.length]!;
  const locationId = w.locations[i % w.locations.length]!;
  const fromLoadUnit = `/v1/transport-units/${w.source}/load-units/1/packaging-units`;
  const quantity = pc(1);
  switch (shape) {
    case 'unit to LoadUnit':
      return call(ctx.app, 'put', `/v1/packaging-units/${w.unitPKey}`).send({
        quantity,
        loadUnit: { transportUnitBK: loadUnit, physicalPosition: '1' },
      });
    case 'unit to Location':
      return call(ctx.app, 'put', `/v1/packaging-units/${w.unitPKey}`).send({
        quantity,
        actualLocation: { locationId },
      });
    case 'LoadUnit to LoadUnit':
      return call(ctx.app, 'put', fromLoadUnit).send({
        product: { sku: w.sku },
        quantity,
        targetTransportUnitBK: loadUnit,
        targetLoadUnitPosition: '1',
      });
    case 'LoadUnit to Location':
      return call(ctx.app, 'put', fromLoadUnit).send({
        product: { sku: w.sku },
        quantity,
        actualLocation: { locationId },
      });
  }
}

async function expectConserved(w: Warehouse, responses: readonly Response[]): Promise<void> {
  const failures = responses.filter((response) => response.status >= 300);
  expect(failures.map((response) => [response.status, response.body as unknown])).toEqual([]);
  expect(await totalsOf(ctx.db.pool, w.sku)).toEqual({ qty: '100', reserved: '0', units: 21 });
  const units = await storedUnits(ctx.db.pool, [w.sku]);
  expect(units.find((unit) => unit.pKey === w.unitPKey)?.qtyBase).toBe('80');
  expect(units.filter((unit) => unit.pKey !== w.unitPKey).map((unit) => unit.qtyBase)).toEqual(Array(20).fill('1'));
  expect(await allViolations(ctx.db.pool)).toEqual([]);
}

describe('20 parallel partial moves out of one unit', () => {
  const shapes: Shape[] = ['unit to LoadUnit', 'unit to Location', 'LoadUnit to LoadUnit', 'LoadUnit to Location'];

  it.each(shapes)('conserve the total when all go %s', async (shape) => {
    const w = await warehouse();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => moveOnePiece(w, shape, i)));
    await expectConserved(w, responses);
  });

  it('conserve the total when the four shapes are mixed', async () => {
    const w = await warehouse();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => moveOnePiece(w, shapes[i % 4]!, i)));
    await expectConserved(w, responses);
  });
});
