import type pg from 'pg';

/** Events a fill writes per transaction: a bulk load's transactions are of this order. */
const EVENTS_PER_TRANSACTION = 100_000;

/**
 * D39: a backlog of `count` committed, unnumbered `pu.event.created` events (a PackagingUnit-shaped resource of about
 * 190 B), with the outbox's statistics left as they were before it: taken while the default part was empty and
 * never renewed, as after a bulk load that autovacuum has not caught up with.
 */
export async function fillUnnumberedBacklog(pool: pg.Pool, count: number): Promise<void> {
  await pool.query('ALTER TABLE event_outbox_unnumbered SET (autovacuum_enabled = off)');
  await pool.query('ANALYZE event_outbox');
  for (let first = 1; first <= count; first += EVENTS_PER_TRANSACTION) {
    const last = Math.min(count, first + EVENTS_PER_TRANSACTION - 1);
    await pool.query(
      `INSERT INTO event_outbox (type, resource_key, request_id, resource)
       SELECT 'pu.event.created', k, 'backlog-' || $1::text,
              json_build_object('pKey', k, 'product', json_build_object('sku', 'BACKLOG'),
                                'quantity', json_build_object('magnitude', 1, 'unit', 'PC'),
                                'actualLocation', json_build_object('locationId', 'BACKLOG/0000/0000/0000/0000'))
         FROM (SELECT gen_random_uuid()::text AS k FROM generate_series($1::int, $2::int)) g`,
      [first, last],
    );
  }
}

/** Gives the statistics back to autovacuum (the fill turned it off for the default part). */
export async function restoreAutovacuum(pool: pg.Pool): Promise<void> {
  await pool.query('ALTER TABLE event_outbox_unnumbered RESET (autovacuum_enabled)');
}
