import { inProductUnit } from '../allocation/events.js';
import { linkSchema, type Link } from '../http/links.js';
import { put, type Json } from '../http/view.js';
import { z } from '../openapi/zod.js';
import { Dec } from '../units/decimal.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';
import type { ReservationDetail } from './service.js';
import { RESERVATION_STATES } from './sql.js';

export const RESERVATIONS_REL = 'reservations';

const reservationFields = {
  reservationId: z.string(),
  sku: z.string(),
  qty: quantityResponseSchema,
  picked: quantityResponseSchema,
  state: z.enum(RESERVATION_STATES),
  externalRef: z.string().optional(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().optional(),
  endedAt: z.iso.datetime().optional(),
  units: z.array(
    z
      .object({ pKey: z.string(), qty: quantityResponseSchema, picked: quantityResponseSchema })
      .strict()
      .openapi('ReservedUnit', { description: 'What the reservation holds (or held) on one PackagingUnit' }),
  ),
};

/** A reservation in plain JSON (D32), quantities in the Product's base unit. */
export const reservationSchema = z
  .object(reservationFields)
  .strict()
  .openapi('Reservation', { description: 'A reservation and what it holds, or held when it ended (D32)' });

export const reservationResourceSchema = z
  .object({ ...reservationFields, _links: z.object({ self: linkSchema }).strict() })
  .strict()
  .openapi('ReservationResource');

/** D32's fields in D32's order; absent optional fields are left out. */
export function reservationView({ reservation, parts }: ReservationDetail): Json {
  const base = reservation.productBaseCode;
  const picked = parts.filter((part) => part.picked).reduce((sum, part) => sum.plus(part.qtyBase), new Dec(0));
  const view: Json = {
    reservationId: reservation.reservationId,
    sku: reservation.sku,
    qty: inProductUnit(reservation.qtyBase, base),
    picked: inProductUnit(picked, base),
    state: reservation.state,
  };
  put(view, 'externalRef', reservation.externalRef);
  view.createdAt = reservation.createdAt.toISOString();
  put(view, 'expiresAt', reservation.expiresAt?.toISOString());
  put(view, 'endedAt', reservation.endedAt?.toISOString());
  view.units = parts.map((part) => ({
    pKey: part.pKey,
    qty: inProductUnit(part.qtyBase, base),
    picked: inProductUnit(part.picked ? part.qtyBase : '0', base),
  }));
  return view;
}

export function reservationResource(detail: ReservationDetail, self: Link): Json {
  return { ...reservationView(detail), _links: { self } };
}
