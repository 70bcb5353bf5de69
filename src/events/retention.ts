import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import {
  advancePrunedThrough,
  countEventsBetween,
  createOutboxParts,
  dropOutboxPart,
  listOutboxParts,
  selectPrunableBounds,
  type OutboxPart,
} from './partitions.js';

const LOCK_NOT_AVAILABLE = '55P03';
const UNDEFINED_TABLE = '42P01';
// Each attempt holds writers up for at most the DDL's lock timeout (200 ms); under load the drop may need several
// before the writers in flight let it through. A part left over is dropped at the next prune.
const DROP_ATTEMPTS = 20;
const DROP_RETRY_MS = 100;

/**
 * Keeps parts created ahead of numbering, so numbered events land in a part that can later be dropped whole.
 * Looks at the database only when the head it is told of comes within `headroom` of the parts' end.
 */
export class OutboxRoom {
  private coveredTo = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly size: number,
    // At least the events of one numbering run, so that a run never outgrows the parts.
    private readonly headroom: number,
  ) {}

  async makeRoom(head: number): Promise<void> {
    if (head + this.headroom < this.coveredTo) return;
    this.coveredTo = await createOutboxParts(this.pool, this.size, this.headroom);
  }
}

/** Drops `part`, trying again a few times when writers keep it from its lock; false when it stays for now. */
async function dropWithRetries(pool: pg.Pool, part: OutboxPart): Promise<boolean> {
  for (let attempt = 1; attempt <= DROP_ATTEMPTS; attempt++) {
    try {
      await dropOutboxPart(pool, part);
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      // Another instance's prune dropped it first.
      if (code === UNDEFINED_TABLE) return true;
      if (code !== LOCK_NOT_AVAILABLE) throw error;
    }
    await delay(DROP_RETRY_MS + Math.random() * 2 * DROP_RETRY_MS);
  }
  return false;
}

/**
 * Removes the events committed before `cutoff` part by part, oldest first (D34): a part goes when every event in
 * it is numbered, older than the cutoff and, with a relay, published to `relayExchange` (nothing before the relay
 * first ran). The feed's start moves past the part in a one-row transaction, then the part is dropped: no row is
 * deleted one by one, and numbering waits at most for the drop's short lock. Answers the events removed.
 */
export async function pruneOutbox(pool: pg.Pool, cutoff: Date, relayExchange: string | undefined): Promise<number> {
  let removed = 0;
  for (const part of await listOutboxParts(pool)) {
    const through = part.to - 1;
    const bounds = await selectPrunableBounds(pool, relayExchange);
    if (through > bounds.prunableThrough) break;
    if (through > bounds.prunedThrough) {
      // The part is full (its last position is numbered), so what is counted here no longer changes.
      const { events, young } = await countEventsBetween(pool, bounds.prunedThrough, through, cutoff);
      if (young > 0) break;
      await advancePrunedThrough(pool, through);
      removed += events;
    }
    if (!(await dropWithRetries(pool, part))) break;
  }
  return removed;
}
