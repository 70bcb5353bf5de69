import type { EventType, NewEvent } from '../events/outbox.js';
import { baseCodeOf } from '../packaging-units/stock.js';
import { Dec } from '../units/decimal.js';
import { Quantity } from '../units/quantity.js';

/** What one reservation holds, or held, of one unit; the amount in the kind's smallest unit. */
export interface ReservedPart {
  readonly pKey: string;
  readonly qtyBase: Dec | string;
}

export interface ReservationFacts {
  readonly reservationId: string;
  readonly sku: string;
  readonly productBaseCode: string;
  readonly parts: readonly ReservedPart[];
}

/** An amount in the kind's smallest unit, in the Product's base unit when exact there. */
export function inProductUnit(amount: Dec | string, productBaseCode: string): Quantity {
  const quantity = Quantity.of(amount, baseCodeOf(productBaseCode));
  return quantity.to(productBaseCode) ?? quantity;
}

/**
 * D27 names a reservation's event shape: `{reservationId, sku, qty, units: [{pKey, qty}]}`, the amount the event
 * concerns (reserved, released, expired, picked or issued) and the units it concerns. Amounts are
 * in the Product's base unit when exact there, otherwise in the kind's smallest unit: the requested unit is not
 * stored, and a release then renders the same amounts as the reservation did.
 */
export function reservationEvent(
  type: Extract<EventType, `allocation.event.${string}`>,
  { reservationId, sku, productBaseCode, parts }: ReservationFacts,
): NewEvent {
  const total = parts.reduce((sum, part) => sum.plus(part.qtyBase), new Dec(0));
  return {
    type,
    key: reservationId,
    resource: {
      reservationId,
      sku,
      qty: inProductUnit(total, productBaseCode),
      units: parts.map((part) => ({ pKey: part.pKey, qty: inProductUnit(new Dec(part.qtyBase), productBaseCode) })),
    },
  };
}
