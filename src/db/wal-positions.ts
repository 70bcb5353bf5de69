import type pg from 'pg';

/** `16/B374D848` as a number of bytes. */
export function lsnBytes(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

// Far more than any lag worth measuring at the probe's pace: beyond it the oldest samples are dropped (a replica
// behind all of them is then measured from the oldest, which is more than any bound allows anyway).
const MAX_SAMPLES = 1000;

/**
 * The primary's WAL positions as this process saw them, timed by its own clock: a replica that has replayed up to
 * some position lags by at least the age of the oldest remembered position past it, and by nothing when it has
 * replayed them all. Kept for every replica alike: behind a balancer each pooled connection may reach another one
 * (issue 37), so a position is dropped only by age, never because one replica replayed it.
 */
export class PrimaryPositions {
  private readonly samples: { readonly lsn: bigint; readonly at: number }[] = [];

  record(lsn: bigint, at: number): void {
    const newest = this.samples.at(-1);
    if (newest && lsn <= newest.lsn) return;
    this.samples.push({ lsn, at });
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
  }

  /** How far behind a replica that replayed up to `replayed` is, in milliseconds, as of `now`. */
  lagOf(replayed: bigint, now = Date.now()): number {
    let low = 0;
    let high = this.samples.length;
    // The first sample the replica has not replayed (positions only grow).
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.samples[middle]!.lsn <= replayed) low = middle + 1;
      else high = middle;
    }
    const oldestMissing = this.samples[low];
    return oldestMissing ? now - oldestMissing.at : 0;
  }
}

/** Whose writes a replica must have replayed before it serves a read (DATABASE_READ_AFTER, D41). */
export type ReadsAfter = 'any-write' | 'own-writes';

/**
 * Issue 37 (D41): a client reads what it wrote. With `any-write` (the default) a read goes to a replica only once
 * it has replayed the primary's WAL position as read after the read arrived, so every write acknowledged before
 * it, by any instance, is there: reads arriving together share one such question to the primary, asked after the
 * last of them arrived. With `own-writes` only this process's writes are waited for: when a write request ends
 * (its answer sent, so its transaction committed) the primary's position is read once, and a read that comes
 * while a write is still in flight (its answer may be on its way) reads the position itself; a write answered by
 * another instance is not known, so a replica behind it may answer older data, but never a 404 (ReadReplica reads
 * a "not found" again on the primary).
 */
export class WriteFence {
  private writesInFlight = 0;
  private fence = 0n;
  private readonly pending = new Set<Promise<void>>();
  private asking: Promise<bigint> | undefined;
  private askingNext: Promise<bigint> | undefined;

  constructor(
    private readonly primary: pg.Pool,
    private readonly readsAfter: ReadsAfter,
  ) {}

  writeStarted(): void {
    this.writesInFlight++;
  }

  writeEnded(): void {
    this.writesInFlight--;
    if (this.readsAfter === 'any-write') return;
    const taken = this.primaryPosition().then(
      () => undefined,
      // Without the position the fence stays where it was; the read it would have guarded is checked by isFresh
      // where a route has one, and a 404 is read again on the primary in any case.
      () => undefined,
    );
    this.pending.add(taken);
    void taken.finally(() => this.pending.delete(taken));
  }

  /** The position a replica must have replayed to serve a read now. */
  async required(): Promise<bigint> {
    if (this.readsAfter === 'any-write') return this.positionAskedFromNow();
    if (this.writesInFlight > 0) return this.primaryPosition();
    if (this.pending.size > 0) await Promise.all(this.pending);
    return this.fence;
  }

  /**
   * The primary's position as asked after this call: a question already on its way may predate a write this
   * read must see, so the caller joins the next one, which leaves when that question is answered.
   */
  private positionAskedFromNow(): Promise<bigint> {
    if (this.askingNext) return this.askingNext;
    if (!this.asking) return this.ask();
    const next = this.asking
      .catch(() => undefined)
      .then(() => {
        this.askingNext = undefined;
        return this.ask();
      });
    this.askingNext = next;
    return next;
  }

  private ask(): Promise<bigint> {
    const asked = this.primaryPosition().finally(() => {
      if (this.asking === asked) this.asking = undefined;
    });
    this.asking = asked;
    return asked;
  }

  private async primaryPosition(): Promise<bigint> {
    const { rows } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const lsn = lsnBytes(rows[0]!.lsn);
    if (lsn > this.fence) this.fence = lsn;
    return this.fence;
  }
}
