import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { PeriodicWork } from '../background.js';
import { withTransaction } from '../db/tx.js';
import { expireNext } from './service.js';

// D32: a reservation ends at most about this long after its expiry (the bound is 10 s).
const POLL_MS = 1000;
// One run ends at most this many before it yields to the next tick, so a backlog never holds the process.
const EXPIRIES_PER_RUN = 500;

/**
 * Ends ACTIVE reservations past their expiry (D32), every second; one run at a time per process. Each expiry is
 * its own transaction, and takes its reservation with SKIP LOCKED: several instances share the work, none waits
 * for another, and a reservation a release, pick or issue holds is left to them. Reservations expired while no
 * instance ran (a restart) are simply past their expiry at the next run.
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
    const actor = { subject: 'system:reservation-expiry', requestId: `expiry-${randomUUID()}` };
    let expired = 0;
    try {
      while (!this.periodic.isStopped() && expired < EXPIRIES_PER_RUN) {
        if (!(await withTransaction(this.pool, (tx) => expireNext(tx, actor)))) break;
        expired += 1;
      }
    } catch (error) {
      // The next tick tries again; a database that is down is reported by the health check, not here.
      this.logger.warn({ err: error }, 'expiring reservations failed; retrying at the next tick');
    }
    if (expired > 0) this.logger.info({ expired }, 'reservations expired');
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
