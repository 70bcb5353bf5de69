import type pg from 'pg';
import { dropWithRetries } from '../db/ddl.js';
import {
  advancePrunedThrough,
  countEventsBetween,
  createOutboxParts,
  dropOutboxPart,
  listOutboxParts,
  selectPrunableBounds,
} from './partitions.js';

/**
 * Keeps parts created ahead of numbering, so numbered events land in a part that can later be dropped whole.
 * Looks at the database only when the head it is told of comes within `needed` (by default `headroom`) of the
 * parts' end, and then makes parts for `headroom` past the head.
 */
export class OutboxRoom {
  private coveredTo = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly size: number,
    // At least the events of one numbering run, so that a run never outgrows the parts.
    private readonly headroom: number,
  ) {}

  async makeRoom(head: number, needed = this.headroom): Promise<void> {
    if (head + needed < this.coveredTo) return;
    this.coveredTo = await createOutboxParts(this.pool, this.size, this.headroom);
  }
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
    // A part left over is dropped at the next prune.
    if (!(await dropWithRetries(() => dropOutboxPart(pool, part)))) break;
  }
  return removed;
}
