import type pg from 'pg';
import type { Logger } from 'pino';
import { PeriodicWork } from '../background.js';
import { dropWithRetries } from '../db/ddl.js';
import { withTransaction } from '../db/tx.js';
import {
  createLedgerMonths,
  deleteBoundariesBefore,
  deleteEndedReservations,
  dropLedgerPart,
  listLedgerParts,
  selectKeptSince,
  selectRetentionStart,
} from './sql.js';

const RUN_EVERY_MS = 60 * 60_000;
// Parts exist this many months past the current one: an instance that stops for less never finds a month missing.
const MONTHS_AHEAD = 2;
const RESERVATIONS_PER_STATEMENT = 10_000;
const BOUNDARIES_PER_STATEMENT = 10_000;

export interface HistorySettings {
  /** Unset: the ledger is kept for ever. */
  readonly ledgerRetentionMonths: number | undefined;
  readonly reservationRetentionDays: number;
}

/**
 * D34: the ledger's months ahead of time, and the history past retention removed: months of the ledger dropped
 * whole, ended reservations deleted in slices. Runs at start and every hour, one run at a time per process; several
 * instances may run together (the parts are created under a lock, and a month already dropped is not found again).
 */
export class HistoryRetention {
  private readonly periodic = new PeriodicWork(
    () =>
      this.runOnce().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'keeping the history failed; retrying in an hour'),
      ),
    RUN_EVERY_MS,
  );

  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: HistorySettings,
    private readonly logger: Logger,
  ) {}

  /** One run now (the service awaits the first before it serves, so the current month's part exists). */
  run(): Promise<void> {
    return this.periodic.run();
  }

  private async runOnce(): Promise<void> {
    const created = await withTransaction(this.pool, (tx) => createLedgerMonths(tx, MONTHS_AHEAD));
    if (created.length > 0) this.logger.info({ parts: created }, 'created the ledger parts of the next months');
    const { ledgerRetentionMonths, reservationRetentionDays } = this.settings;
    if (ledgerRetentionMonths !== undefined) {
      await this.dropLedgerMonths(ledgerRetentionMonths);
      await this.deleteOldBoundaries();
    }
    await this.deleteEndedReservations(reservationRetentionDays);
  }

  private async dropLedgerMonths(months: number): Promise<void> {
    const keptSince = await selectRetentionStart(this.pool, months);
    for (const part of await listLedgerParts(this.pool)) {
      if (part.to > keptSince || this.periodic.isStopped()) break;
      if (!(await dropWithRetries(() => withTransaction(this.pool, (tx) => dropLedgerPart(tx, part))))) {
        this.logger.warn(
          { part: part.name },
          'writers kept a month of the ledger from being dropped; retrying in an hour',
        );
        break;
      }
      this.logger.info({ part: part.name, keptSince: part.to }, 'dropped a month of the ledger past its retention');
    }
  }

  /** D40: commit boundaries go with the ledger months they stood in (the one `at=` still needs stays). */
  private async deleteOldBoundaries(): Promise<void> {
    const keptSince = await selectKeptSince(this.pool);
    if (!keptSince) return;
    let batch = BOUNDARIES_PER_STATEMENT;
    while (batch === BOUNDARIES_PER_STATEMENT && !this.periodic.isStopped()) {
      batch = await deleteBoundariesBefore(this.pool, keptSince, BOUNDARIES_PER_STATEMENT);
    }
  }

  private async deleteEndedReservations(days: number): Promise<void> {
    const endedBefore = new Date(Date.now() - days * 86_400_000);
    let deleted = 0;
    for (let batch = RESERVATIONS_PER_STATEMENT; batch === RESERVATIONS_PER_STATEMENT && !this.periodic.isStopped();) {
      batch = await deleteEndedReservations(this.pool, endedBefore, RESERVATIONS_PER_STATEMENT);
      deleted += batch;
    }
    if (deleted > 0) this.logger.info({ deleted, days }, 'deleted reservations ended past their retention');
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
