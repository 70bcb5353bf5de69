import { Quantity } from '../units/quantity.js';
import type { MovementRow } from './sql.js';

/** One ledger row as clients read it: quantities in the kind's smallest unit, times in UTC. */
export function movementView(row: MovementRow): Record<string, unknown> {
  const view: Record<string, unknown> = {
    type: row.kind,
    quantityBefore: Quantity.of(row.qtyBefore, row.baseCode),
    quantityAfter: Quantity.of(row.qtyAfter, row.baseCode),
    reservedBefore: Quantity.of(row.reservedBefore, row.baseCode),
    reservedAfter: Quantity.of(row.reservedAfter, row.baseCode),
  };
  if (row.from) view.from = row.from;
  if (row.to) view.to = row.to;
  if (row.reservationId) view.reservationId = row.reservationId;
  view.actor = row.actor;
  if (row.requestId) view.requestId = row.requestId;
  view.occurredAt = row.occurredAt.toISOString();
  return view;
}
