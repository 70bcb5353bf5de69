import { inProductUnit } from '../allocation/events.js';
import { linkSchema, type Link } from '../http/links.js';
import type { Version } from '../http/validators.js';
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

/**
 * D33's tag of a reservation. `reservation_life` has no version column, so the version is made of what the read
 * returns anyway that changes with each change of the representation: the state (a release, expiry or issue ends
 * it, once), the newest part's id and the number of picked parts (a pick either inserts a part, whose id is above
 * every earlier one, or marks one picked; nothing else changes a part), and the Product's `ol` (its SKU and base
 * unit are shown).
 */
export function reservationVersion({ reservation, parts }: ReservationDetail): Version {
  // Parts come in id order.
  const newestPartId = parts.at(-1)?.id;
  const pickedParts = parts.filter((part) => part.picked).length;
  return [reservation.reservationId, reservation.state, newestPartId, pickedParts, reservation.productOl];
}
