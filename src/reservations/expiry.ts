import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { PeriodicWork } from '../background.js';
import { withTransaction } from '../db/tx.js';
import { EXPIRY_ACTOR, expireDue } from './service.js';

// D32: a reservation ends at most about this long after its expiry (the bound is 10 s).
const POLL_MS = 1000;
// Reservations ended per transaction (D40: set-wise, a few statements each): large enough that 50,000 due at once
// take seconds, small enough that a transaction holds its locks for a fraction of a second.
export const EXPIRIES_PER_TRANSACTION = 1000;
// Batches one instance runs side by side: one is rendering its events while the other writes.
const BATCHES_AT_ONCE = 2;

/**
 * Ends ACTIVE reservations past their expiry (D32, D40), every second; one run at a time per process. A run ends
 * batches until none is due; each batch is one transaction that takes its reservations with SKIP LOCKED, so
 * several instances share the work, none waits for another, and a reservation a release, pick or issue holds is
 * left to them. Reservations expired while no instance ran (a restart) are simply past their expiry at the next
 * run. Until a batch ends them, readers and writers treat them as EXPIRED already.
 */
export class ReservationExpiry {
  private readonly periodic = new PeriodicWork(() => this.expireDue(), POLL_MS);

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
  ) {
    void this.periodic.run();
  }

  private async expireDue(): Promise<void> {
    const actor = { subject: EXPIRY_ACTOR, requestId: `expiry-${randomUUID()}` };
    let expired = 0;
    const endBatches = async (): Promise<void> => {
      while (!this.periodic.isStopped()) {
        const ended = await withTransaction(this.pool, (tx) => expireDue(tx, actor, EXPIRIES_PER_TRANSACTION));
        expired += ended;
        if (ended < EXPIRIES_PER_TRANSACTION) break;
      }
    };
    // Settled, not raced: a run ends only once every batch has, so `stop` never leaves one behind.
    const failed = (await Promise.allSettled(Array.from({ length: BATCHES_AT_ONCE }, endBatches))).find(
      (outcome) => outcome.status === 'rejected',
    );
    if (failed) {
      // The next tick tries again; a database that is down is reported by the health check, not here.
      this.logger.warn({ err: failed.reason }, 'expiring reservations failed; retrying at the next tick');
    }
    if (expired > 0) this.logger.info({ expired }, 'reservations expired');
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
