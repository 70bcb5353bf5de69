import type pg from 'pg';
import type { Logger } from 'pino';
import client from 'prom-client';
import { isBrokenConnection } from './pg-errors.js';
import { redact } from './database.js';
import { createPool, probeConnection, type PoolSettings } from './pool.js';
import { isRetryable, type Queryable } from './tx.js';
import { lsnBytes, PrimaryPositions, WriteFence, type ReadsAfter } from './wal-positions.js';

/**
 * Issue 17: reads (finders, lists, streams, the feed's pages) may be served by a streaming replica
 * (DATABASE_READ_URL) once it has replayed what they must see (D41). Writes, and every read a write decides on, use
 * the primary pool directly, inside withTransaction.
 */
export interface Reads {
  /**
   * Runs `read` on the replica when it keeps up, otherwise on the primary. `read` must only read: it runs again on
   * the primary when the replica's connection fails under it, or when `isFresh` finds its result too old.
   */
  run<T>(read: (db: Queryable) => Promise<T>, isFresh?: (result: T) => boolean): Promise<T>;
}

/** Without a replica every read is the primary's. */
export function primaryReads(primary: pg.Pool): Reads {
  return { run: (read) => read(primary) };
}

export type ReplicaState = 'unmeasured' | 'current' | 'lagging' | 'unreachable' | 'not a standby';

export interface ReplicaHealth {
  readonly status: 'UP' | 'DOWN';
  readonly details: {
    readonly reads: 'replica' | 'primary';
    readonly state: ReplicaState;
    readonly lagMs?: number;
    readonly maxLagMs: number;
  };
}

export interface ReadReplicaSettings extends PoolSettings {
  readonly url: string;
  readonly maxLagMs: number;
  readonly readsAfter: ReadsAfter;
}

const PROBE_TIMEOUT_MS = 2000;
// How long one pooled connection's replayed position is trusted before it is asked again: lag measured per
// connection is precise to this, and a read pays for the question at most this often per connection.
const CONNECTION_CHECK_MS = 100;
// A replica short of the position a read needs is asked again after 1, 2, 4, … up to this many ms (31 ms in all)
// before the read goes to the primary.
const REPLAY_WAIT_LAST_PAUSE_MS = 16;

/** What a pooled replica connection last said it had replayed, and when. */
interface Replayed {
  readonly lsn: bigint;
  readonly at: number;
}

/** A one-connection pool for the lag probe, so that it never queues behind requests. */
function probePool(of: pg.Pool): pg.Pool {
  return probeConnection(of, { timeoutMs: PROBE_TIMEOUT_MS, applicationName: 'inventory-service-lag' });
}

const isNotFound = (error: unknown): boolean => (error as { status?: unknown }).status === 404;

/**
 * Lag is measured in the primary's WAL, timed by this process's clock: every probe reads the primary's
 * `pg_current_wal_lsn()` and remembers when it did, then the replica's `pg_last_wal_replay_lsn()`. The replica lags
 * by at least the age of the oldest remembered primary position it has not replayed yet; when it has replayed them
 * all, it lags by nothing. Unlike `now() - pg_last_xact_replay_timestamp()`, an idle primary does not look like a
 * lagging replica (nothing to replay is no lag), no heartbeat table is written, and the two servers' clocks never
 * meet. The figure is a lower bound, precise to one probe interval.
 */
export class ReadReplica implements Reads {
  private readonly pool: pg.Pool;
  private readonly primaryProbe: pg.Pool;
  private readonly replicaProbe: pg.Pool;
  private readonly positions = new PrimaryPositions();
  private readonly fence: WriteFence;
  private readonly replayedBy = new WeakMap<pg.PoolClient, Replayed>();
  private state: ReplicaState = 'unmeasured';
  private lagMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private closed = false;
  private readsBy: client.Counter<'pool'> | undefined;

  constructor(
    private readonly primary: pg.Pool,
    private readonly settings: ReadReplicaSettings,
    private readonly logger: Logger,
  ) {
    this.pool = createPool(settings.url, settings, logger);
    this.primaryProbe = probePool(primary);
    // Every read may ask the primary's position (any-write): on the probe's own connection, never behind writes.
    this.fence = new WriteFence(settings.readsAfter === 'any-write' ? this.primaryProbe : primary, settings.readsAfter);
    this.replicaProbe = probePool(this.pool);
  }

  /** How often the lag is measured: a fifth of the lag allowed, between 100 ms and 1 s. */
  get probeIntervalMs(): number {
    return Math.min(1000, Math.max(100, Math.floor(this.settings.maxLagMs / 5)));
  }

  /** Measures now, then every probe interval until closed. */
  start(): Promise<void> {
    const cycle = (): void => {
      this.probing = this.probe().finally(() => {
        if (this.closed) return;
        this.timer = setTimeout(cycle, this.probeIntervalMs);
        this.timer.unref();
      });
    };
    cycle();
    return this.probing!;
  }

  get readsGoTo(): 'replica' | 'primary' {
    return this.state === 'current' ? 'replica' : 'primary';
  }

  /** A write request starts (D41): reads after it wait for a replica that has replayed it, or use the primary. */
  writeStarted(): void {
    this.fence.writeStarted();
  }

  writeEnded(): void {
    this.fence.writeEnded();
  }

  /**
   * Issue 37 (D41): the replica is used only through a connection that has replayed what this process wrote before
   * the read, and is itself within DATABASE_READ_MAX_LAG_MS: behind a balancer each connection may reach another
   * replica, so the connection serving the read is asked, not the probe's. A "not found" from a replica is read
   * again on the primary: a replica behind never makes a resource disappear.
   */
  async run<T>(read: (db: Queryable) => Promise<T>, isFresh?: (result: T) => boolean): Promise<T> {
    if (!this.mayUseReplica()) return this.onPrimary(read);
    let required: bigint;
    try {
      required = await this.fence.required();
    } catch {
      // The primary's position is unknown: only the primary is sure to have every write the read must see.
      return this.onPrimary(read);
    }
    let client: pg.PoolClient | undefined;
    let result: T;
    try {
      client = await this.pool.connect();
      if (!(await this.connectionServes(client, required))) {
        client.release();
        client = undefined;
        return this.onPrimary(read);
      }
      result = await read(client);
      client.release();
      client = undefined;
    } catch (error) {
      const broken = isBrokenConnection(error);
      client?.release(broken ? (error as Error) : undefined);
      // On a standby 40001 (and 40P01) is a statement cancelled by a conflict with the WAL being replayed.
      if (broken) {
        this.changeState('unreachable', { err: error });
      } else if (!isRetryable(error) && !isNotFound(error)) {
        throw error;
      }
      return this.onPrimary(read);
    }
    if (isFresh && !isFresh(result)) return this.onPrimary(read);
    this.readsBy?.inc({ pool: 'replica' });
    return result;
  }

  private mayUseReplica(): boolean {
    return this.state === 'current' || this.state === 'lagging';
  }

  /**
   * Whether `client`'s replica has replayed `required` and lags by no more than the bound. A replica just behind
   * `required` (streaming replay is normally milliseconds behind a busy primary) is waited for, briefly.
   */
  private async connectionServes(client: pg.PoolClient, required: bigint): Promise<boolean> {
    let replayed = this.replayedBy.get(client);
    if (!replayed || Date.now() - replayed.at > CONNECTION_CHECK_MS || replayed.lsn < required) {
      replayed = await this.askReplayed(client);
    }
    for (let pauseMs = 1; replayed && replayed.lsn < required && pauseMs <= REPLAY_WAIT_LAST_PAUSE_MS; pauseMs *= 2) {
      if (this.positions.lagOf(replayed.lsn) > this.settings.maxLagMs) return false;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      replayed = await this.askReplayed(client);
    }
    return (
      replayed !== undefined && replayed.lsn >= required && this.positions.lagOf(replayed.lsn) <= this.settings.maxLagMs
    );
  }

  /** What `client`'s server has replayed, remembered for the connection; undefined when it is not a standby. */
  private async askReplayed(client: pg.PoolClient): Promise<Replayed | undefined> {
    const { rows } = await client.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn');
    // Not a standby (promoted, or a primary behind the address): never read as a replica.
    if (rows[0]!.lsn === null) return undefined;
    const replayed = { lsn: lsnBytes(rows[0]!.lsn), at: Date.now() };
    this.replayedBy.set(client, replayed);
    return replayed;
  }

  health(): ReplicaHealth {
    const answers = this.state === 'current' || this.state === 'lagging';
    return {
      status: answers ? 'UP' : 'DOWN',
      details: {
        reads: this.readsGoTo,
        state: this.state,
        ...(this.lagMs !== undefined && { lagMs: this.lagMs }),
        maxLagMs: this.settings.maxLagMs,
      },
    };
  }

  registerMetrics(registry: client.Registry): void {
    const replica = (): ReadReplica => this;
    new client.Gauge({
      name: 'db_read_replica_lag_seconds',
      help: 'How far the read replica is behind the primary, as last measured (NaN while it does not answer)',
      registers: [registry],
      aggregator: 'max',
      collect() {
        this.set(replica().lagMs === undefined ? NaN : replica().lagMs! / 1000);
      },
    });
    new client.Gauge({
      name: 'db_read_replica_in_use',
      help: '1 while reads go to the replica, 0 while they go to the primary',
      registers: [registry],
      aggregator: 'min',
      collect() {
        this.set(replica().readsGoTo === 'replica' ? 1 : 0);
      },
    });
    this.readsBy = new client.Counter({
      name: 'db_reads_total',
      help: 'Reads that could go to the replica, by the pool that served them',
      labelNames: ['pool'] as const,
      registers: [registry],
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.probing;
    await Promise.all([this.pool.end(), this.primaryProbe.end(), this.replicaProbe.end()]);
  }

  private onPrimary<T>(read: (db: Queryable) => Promise<T>): Promise<T> {
    this.readsBy?.inc({ pool: 'primary' });
    return read(this.primary);
  }

  private async probe(): Promise<void> {
    let primaryLsn: bigint;
    const at = Date.now();
    try {
      const result = await this.primaryProbe.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      primaryLsn = lsnBytes(result.rows[0]!.lsn);
    } catch (error) {
      // Without the primary's position the lag is unknown; the primary serves the reads (and fails them) meanwhile.
      this.lagMs = undefined;
      this.changeState('unmeasured', { err: error });
      return;
    }
    this.positions.record(primaryLsn, at);

    let replayed: { standby: boolean; lsn: string | null };
    try {
      const result = await this.replicaProbe.query<{ standby: boolean; lsn: string | null }>(
        'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn',
      );
      replayed = result.rows[0]!;
    } catch (error) {
      this.lagMs = undefined;
      this.changeState('unreachable', { err: error });
      return;
    }
    if (!replayed.standby || replayed.lsn === null) {
      this.lagMs = undefined;
      this.changeState('not a standby', {});
      return;
    }
    this.lagMs = this.positions.lagOf(lsnBytes(replayed.lsn));
    this.changeState(this.lagMs > this.settings.maxLagMs ? 'lagging' : 'current', { lagMs: this.lagMs });
  }

  private changeState(state: ReplicaState, context: object): void {
    if (state === this.state) return;
    const from = this.state;
    this.state = state;
    const log = { ...context, from, to: state, reads: this.readsGoTo, maxLagMs: this.settings.maxLagMs };
    if (state === 'current') this.logger.info(log, 'the read replica serves the reads');
    else this.logger.warn(log, 'the read replica does not serve reads; the primary does');
  }
}

/**
 * DATABASE_READ_URL's replica beside the primary `pool`, measuring its lag from the start; closed before the
 * primary's pool.
 */
export async function openReadReplica(
  primary: pg.Pool,
  poolSettings: PoolSettings,
  replica: { readonly url: string; readonly maxLagMs: number; readonly readsAfter: ReadsAfter },
  logger: Logger,
): Promise<ReadReplica> {
  const readReplica = new ReadReplica(primary, { ...poolSettings, ...replica }, logger);
  await readReplica.start();
  logger.info(
    { readReplica: redact(replica.url), ...readReplica.health().details },
    'reads that need not see their own writes may use the read replica',
  );
  return readReplica;
}
