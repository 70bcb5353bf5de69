import type { Response } from 'supertest';
import { expect } from 'vitest';
import type { TestContext } from '../support/app.js';
import type { QuantityJson } from '../support/builders.js';
import {
  allocate,
  call,
  expectStatus,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  type AllocationElement,
  type CreatedUnit,
} from '../support/stock-api.js';

/** A reservation as GET /allocation/reservations/{id} answers it (D32). */
export interface ReservationJson {
  reservationId: string;
  sku: string;
  qty: QuantityJson;
  picked: QuantityJson;
  state: string;
  externalRef?: string;
  createdAt: string;
  expiresAt?: string;
  endedAt?: string;
  units: { pKey: string; qty: QuantityJson; picked: QuantityJson }[];
  _links?: { self: { href: string } };
}

export interface GivenReservation {
  sku: string;
  locationId: string;
  bk: string;
  units: CreatedUnit[];
  reservationId: string;
}

/**
 * A Product with units of these magnitudes (PC) in LoadUnit 1 of a TransportUnit, and a reservation of `reserve`
 * PC of it (taken oldest unit first, D23) with the extra allocation fields.
 */
export async function givenReservation(
  ctx: TestContext,
  magnitudes: number[],
  reserve: number,
  fields: Record<string, unknown> = {},
): Promise<GivenReservation> {
  const sku = await givenProduct(ctx.app);
  const { locationId } = await givenLocation(ctx.app);
  const bk = await givenTransportUnitOn(ctx.app, locationId);
  const units = await givenUnitsIn(
    ctx.app,
    bk,
    '1',
    sku,
    magnitudes.map((magnitude) => ({ quantity: pcOf(magnitude) })),
  );
  const response = await allocate(ctx.app, { sku, qty: pcOf(reserve), ...fields });
  expectStatus(response, 200, 'allocate');
  const reservationId = (response.body as AllocationElement[])[0]!.reservationId;
  return { sku, locationId, bk, units, reservationId };
}

export const pcOf = (magnitude: number | string): QuantityJson => ({
  '@class': 'org.openwms.core.units.api.Piece',
  unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'],
  magnitude: Number(magnitude),
});

export async function getReservation(ctx: TestContext, reservationId: string): Promise<ReservationJson> {
  const response = await call(ctx.app, 'get', `/allocation/reservations/${reservationId}`);
  expectStatus(response, 200, `GET reservation ${reservationId}`);
  return response.body as ReservationJson;
}

export function pick(ctx: TestContext, reservationId: string, body: unknown) {
  return call(ctx.app, 'post', `/allocation/reservations/${reservationId}/picks`).send(body as object);
}

export function issue(ctx: TestContext, reservationId: string) {
  return call(ctx.app, 'post', `/allocation/reservations/${reservationId}/issue`);
}

export interface LedgerRow {
  pKey: string;
  kind: string;
  qtyBefore: string;
  qtyAfter: string;
  reservedBefore: string;
  reservedAfter: string;
}

/** The ledger rows a request wrote, in order, amounts without trailing zeros. */
export async function ledgerOf(ctx: TestContext, response: Response): Promise<LedgerRow[]> {
  const { rows } = await ctx.db.pool.query<LedgerRow>(
    `SELECT packaging_unit_pkey::text AS "pKey", kind, trim_scale(qty_before)::text AS "qtyBefore",
            trim_scale(qty_after)::text AS "qtyAfter", trim_scale(reserved_before)::text AS "reservedBefore",
            trim_scale(reserved_after)::text AS "reservedAfter"
       FROM stock_movement WHERE request_id = $1 ORDER BY id`,
    [response.headers['x-request-id']],
  );
  return rows;
}

/** The events a request wrote: type and key, in order. */
export async function eventsOf(
  ctx: TestContext,
  response: Response,
): Promise<{ type: string; key: string; resource: Record<string, unknown> }[]> {
  const { rows } = await ctx.db.pool.query<{ type: string; key: string; resource: Record<string, unknown> }>(
    'SELECT type, resource_key AS key, resource FROM event_outbox WHERE request_id = $1 ORDER BY seq',
    [response.headers['x-request-id']],
  );
  return rows;
}

/** The row of a unit as stored, or undefined when it is gone. */
export async function storedUnit(
  ctx: TestContext,
  pKey: string,
): Promise<{ qty: string; reserved: string; loadUnitId: number | null; locationId: number | null } | undefined> {
  const { rows } = await ctx.db.pool.query(
    `SELECT trim_scale(qty_base)::text AS qty, trim_scale(reserved_base)::text AS reserved,
            load_unit_id::int AS "loadUnitId", location_id::int AS "locationId"
       FROM packaging_unit WHERE p_key = $1::uuid`,
    [pKey],
  );
  return rows[0];
}

export function expectIsoInstant(value: unknown): void {
  expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}
