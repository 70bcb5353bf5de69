import fc from 'fast-check';
import type { Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/tx.js';
import { expireDue } from '../../src/reservations/service.js';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  unique,
  type AllocationElement,
} from '../support/stock-api.js';
import { allViolations, totalsOf } from '../support/stock-invariants.js';
import { getReservation, issue, pcOf, pick } from './reservation-api.js';

/**
 * D32 as a property: any sequence of allocate, pick, issue, release and expire keeps stock conserved (what left is
 * exactly what was issued), reserved equal to what the ACTIVE reservations hold and never negative, and every
 * change with its ledger rows and events, every refusal without any.
 */
const ctx = useTestApp();

const SEED = Number(process.env.RESERVATION_PROPERTY_SEED ?? 20_261_127);
const RUNS = Number(process.env.RESERVATION_PROPERTY_RUNS ?? 10);

type Command =
  | { kind: 'allocate'; qty: number }
  | { kind: 'pick'; reservation: number; qty: number }
  | { kind: 'issue' | 'release' | 'expire'; reservation: number };

const reservationIndex = fc.nat({ max: 3 });
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('allocate' as const), qty: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('pick' as const), reservation: reservationIndex, qty: fc.integer({ min: 1, max: 5 }) }),
  fc.record({
    kind: fc.constantFrom('issue' as const, 'release' as const, 'expire' as const),
    reservation: reservationIndex,
  }),
);

interface Modelled {
  id: string;
  state: 'ACTIVE' | 'RELEASED' | 'EXPIRED' | 'ISSUED';
  holds: number;
}

async function writesOf(requestId: string): Promise<{ ledger: number; events: number }> {
  const { rows } = await ctx.db.pool.query(
    `SELECT (SELECT count(*) FROM stock_movement WHERE request_id = $1)::int AS ledger,
            (SELECT count(*) FROM event_outbox WHERE request_id = $1)::int AS events`,
    [requestId],
  );
  return rows[0];
}

const requestIdOf = (response: Response): string => String(response.headers['x-request-id']);

describe('the life of reservations as a property', () => {
  it('conserves stock, keeps reserved what ACTIVE reservations hold, and records every change', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 10 }), async (commands) => {
        const sku = await givenProduct(ctx.app);
        const { locationId } = await givenLocation(ctx.app);
        const bk = await givenTransportUnitOn(ctx.app, locationId);
        await givenUnitsIn(ctx.app, bk, '1', sku, [{ quantity: pcOf(10) }, { quantity: pcOf(7) }]);
        let onHand = 17;
        const reservations: Modelled[] = [];
        const reserved = (): number =>
          reservations.filter((r) => r.state === 'ACTIVE').reduce((sum, r) => sum + r.holds, 0);

        for (const command of commands) {
          let requestId: string;
          let changed: boolean;
          if (command.kind === 'allocate') {
            const response = await allocate(ctx.app, { sku, qty: pcOf(command.qty) });
            expect(response.status).toBe(200);
            const taken = Math.min(command.qty, onHand - reserved());
            const elements = response.body as AllocationElement[];
            expect(elements.reduce((sum, element) => sum + Number(element.qtyAllocated.magnitude), 0)).toBe(taken);
            if (taken > 0) reservations.push({ id: elements[0]!.reservationId, state: 'ACTIVE', holds: taken });
            [requestId, changed] = [requestIdOf(response), taken > 0];
          } else {
            const modelled = reservations[command.reservation];
            if (!modelled) continue;
            if (command.kind === 'pick') {
              const part = (await getReservation(ctx, modelled.id)).units[0]!;
              // Into a LoadUnit: goods released there stay allocatable (D23 takes none lying on a Location).
              const target = { transportUnitBK: unique('TU'), luPos: '1', loadUnitType: 'BOX' };
              const response = await pick(ctx, modelled.id, { pKey: part.pKey, qty: pcOf(command.qty), target });
              const held = Number(part.qty.magnitude);
              const expected = modelled.state !== 'ACTIVE' || command.qty > held ? 409 : 201;
              expect(response.status).toBe(expected);
              [requestId, changed] = [requestIdOf(response), expected === 201];
            } else if (command.kind === 'issue') {
              const response = await issue(ctx, modelled.id);
              const issuable = modelled.state === 'ACTIVE' || modelled.state === 'ISSUED';
              expect(response.status).toBe(issuable ? 204 : 409);
              changed = modelled.state === 'ACTIVE';
              if (changed) [onHand, modelled.state] = [onHand - modelled.holds, 'ISSUED'];
              requestId = requestIdOf(response);
            } else if (command.kind === 'release') {
              const response = await call(ctx.app, 'delete', `/allocation/reservations/${modelled.id}`);
              expect(response.status).toBe(204);
              changed = modelled.state === 'ACTIVE';
              if (changed) modelled.state = 'RELEASED';
              requestId = requestIdOf(response);
            } else {
              await ctx.db.pool.query(
                "UPDATE reservation_life SET expires_at = now() - interval '1 second' WHERE reservation_id = $1",
                [modelled.id],
              );
              requestId = unique('expiry');
              while (
                (await withTransaction(ctx.db.pool, (tx) => expireDue(tx, { subject: 'test', requestId }, 1))) > 0
              );
              changed = modelled.state === 'ACTIVE';
              if (changed) modelled.state = 'EXPIRED';
            }
          }
          const writes = await writesOf(requestId);
          expect({ ledger: writes.ledger > 0, events: writes.events > 0 }).toEqual({
            ledger: changed,
            events: changed,
          });
          expect(await totalsOf(ctx.db.pool, sku)).toEqual(
            expect.objectContaining({ qty: String(onHand), reserved: String(reserved()) }),
          );
          for (const modelledReservation of reservations) {
            expect((await getReservation(ctx, modelledReservation.id)).state).toBe(modelledReservation.state);
          }
        }
        expect(await allViolations(ctx.db.pool)).toEqual([]);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, 240_000);
});
