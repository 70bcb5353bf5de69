import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from 'pino';
import { outsideAnyTrace } from '../tracing/context.js';
import type { FeedSignal } from './feed-signal.js';
import { outboxSignal } from './outbox.js';
import { OutboxRoom } from './retention.js';
import { selectSequencerProbe, sequenceCommittedEvents, vacuumUnnumbered } from './sql.js';

/** Events one run numbers in one transaction (bench scenario 17 numbers with the same runs). */
export const EVENTS_PER_RUN = 5000;
/**
 * Each full run doubles the next one's size up to this: a backlog is numbered in fewer runs, each of which waits
 * for this process's event loop, busy reading that backlog for the streams. 20,000 hold the feed's lock about
 * 0.2 s at scenario 19's rate.
 */
export const MAX_EVENTS_PER_RUN = 20_000;
// Catches events committed by an instance that died before numbering them, and learns other instances' head.
const POLL_MS = 1000;
// A run starts this long after its kick, so the commits of that moment are numbered by one run, not one each.
const GATHER_MS = 5;
// After numbering this many since the last vacuum, the default part is vacuumed (D39): each numbered event leaves a
// dead row there, and a million of them made every later run and probe step over them.
const VACUUM_AFTER = 20_000;

/**
 * Numbers committed events in commit order (see sequenceCommittedEvents for why that is gapless). Runs right
 * after this process commits events, and every second for the rest; one run at a time per process, a request
 * that comes during a run makes it go round once more. A poll first probes without a lock whether any event
 * waits; a run after this process's own commits knows and numbers at once.
 */
export class Sequencer {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  // This process committed events since the last run began: that run needs no probe to know some wait.
  private committed = false;
  private numberedSinceVacuum = 0;
  private vacuuming: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly room: OutboxRoom;
  private readonly onCommitted = (): void => {
    this.committed = true;
    this.kick();
  };

  constructor(
    private readonly pool: pg.Pool,
    private readonly signal: FeedSignal,
    private readonly logger: Logger,
    partitionSize: number,
  ) {
    this.room = new OutboxRoom(pool, partitionSize, Math.max(partitionSize, MAX_EVENTS_PER_RUN));
    outboxSignal.on('committed', this.onCommitted);
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    // A kick comes from a request's commit: the run must not join that request's trace.
    this.running = outsideAnyTrace(() => delay(GATHER_MS).then(() => this.run())).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async run(): Promise<void> {
    const committed = this.committed;
    this.committed = false;
    try {
      if (!committed) {
        const probe = await selectSequencerProbe(this.pool);
        this.signal.advance(probe.sequencedThrough);
        if (!probe.pending) return;
      }
      let limit = EVENTS_PER_RUN;
      for (;;) {
        // Within a backlog a part is made only when the next run needs it: creating one scans the default part,
        // which then holds the rest of the backlog, and locks out numbering and every writer of events meanwhile.
        await this.makeRoom(limit);
        const { assigned, sequencedThrough } = await sequenceCommittedEvents(this.pool, limit);
        this.signal.advance(sequencedThrough);
        this.numberedSinceVacuum += assigned;
        if (assigned < limit || this.stopped) break;
        limit = Math.min(2 * limit, MAX_EVENTS_PER_RUN);
      }
      // Parts for the next positions are made now, while the default part holds few events: made at the first run
      // after a 1,000,000-unit intake, the scan of its 1,010,000 events took 3.5 s before any of them was numbered
      // (bench/notes.md, "Numbering after an intake").
      await this.makeRoom();
      if (this.numberedSinceVacuum >= VACUUM_AFTER) this.vacuum();
    } catch (error) {
      // The next poll tries again; a database that is down is reported by the health check, not here.
      this.logger.debug({ err: error }, 'numbering events failed; retrying at the next poll');
    }
  }

  /**
   * Vacuums the default part beside numbering, not in its way: VACUUM takes no lock that writers or a numbering
   * run wait for, and runs on a connection of its own (the events pool's two are numbering's and the relay's).
   */
  private vacuum(): void {
    if (this.vacuuming) return;
    this.numberedSinceVacuum = 0;
    this.vacuuming = this.onOwnConnection(vacuumUnnumbered)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'vacuuming the unnumbered events failed'))
      .finally(() => {
        this.vacuuming = undefined;
      });
  }

  private async onOwnConnection(work: (client: pg.Client) => Promise<void>): Promise<void> {
    const client = new pg.Client(this.pool.options as pg.ClientConfig);
    client.on('error', (error) => this.logger.warn({ err: error }, 'the vacuum connection failed'));
    await client.connect();
    try {
      await work(client);
    } finally {
      await client.end();
    }
  }

  /**
   * Parts for the next positions (migration 0014) when fewer than `needed` past the head have one (by default the
   * room's whole headroom); without them numbering still works, in the default part.
   */
  private async makeRoom(needed?: number): Promise<void> {
    try {
      await this.room.makeRoom(this.signal.head, needed);
    } catch (error) {
      this.logger.warn({ err: error }, 'creating the next parts of the outbox failed; retrying at the next run');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    outboxSignal.off('committed', this.onCommitted);
    await this.running;
    await this.vacuuming;
  }
}
