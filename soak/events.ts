import type pg from 'pg';
import { sleep } from '../test/reliability/harness.js';
import type { EventConsumer } from '../test/support/event-consumer.js';
import type { CheckResult } from './checks.js';
import { count } from './format.js';

/** How long after the load the relay and the numbering may take to catch up. */
const CATCH_UP_LIMIT_MS = 120_000;

/** The outbox's last seq before the load: the run's events are those after it. */
export async function lastEventSeq(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ seq: string }>('SELECT coalesce(max(seq), 0)::text AS seq FROM event_outbox');
  return rows[0]!.seq;
}

interface OutboxEvent {
  readonly id: string;
  readonly position: string | null;
}

async function runEvents(pool: pg.Pool, fromSeq: string): Promise<OutboxEvent[]> {
  const { rows } = await pool.query<OutboxEvent>(
    'SELECT id::text, position::text FROM event_outbox WHERE seq > $1::bigint ORDER BY seq',
    [fromSeq],
  );
  return rows;
}

function result(check: string, problems: readonly string[], summary: string): CheckResult {
  return { check, passed: problems.length === 0, summary: problems.length === 0 ? summary : problems[0]!, problems };
}

/**
 * Issue 37: every event the run wrote is numbered, each once (one row, one position, no position twice), and has
 * reached the broker at least once (D28). Waits up to two minutes for numbering and relay to catch up.
 */
export async function eventChecks(pool: pg.Pool, consumer: EventConsumer, fromSeq: string): Promise<CheckResult[]> {
  const caughtUp = async (): Promise<{ events: OutboxEvent[]; missing: OutboxEvent[] }> => {
    for (const deadline = Date.now() + CATCH_UP_LIMIT_MS; ; await sleep(1000)) {
      const written = await runEvents(pool, fromSeq);
      const delivered = new Set(consumer.received.map((message) => message.messageId));
      const notYet = written.filter((event) => event.position === null || !delivered.has(event.id));
      if (notYet.length === 0 || Date.now() > deadline) return { events: written, missing: notYet };
    }
  };
  const { events, missing } = await caughtUp();
  const unnumbered = events.filter((event) => event.position === null);
  const positions = new Map<string, number>();
  const ids = new Map<string, number>();
  for (const event of events) {
    if (event.position !== null) positions.set(event.position, (positions.get(event.position) ?? 0) + 1);
    ids.set(event.id, (ids.get(event.id) ?? 0) + 1);
  }
  const twice = [...positions].filter(([, n]) => n > 1).map(([position]) => `position ${position} given twice`);
  const sameId = [...ids].filter(([, n]) => n > 1).map(([id]) => `event ${id} stored ${ids.get(id)} times`);
  const deliveries = new Map<string, number>();
  for (const message of consumer.received) {
    if (message.messageId) deliveries.set(message.messageId, (deliveries.get(message.messageId) ?? 0) + 1);
  }
  const repeated = events.filter((event) => (deliveries.get(event.id) ?? 0) > 1).length;
  const undelivered = missing.filter((event) => event.position !== null);
  return [
    result(
      'events numbered once',
      [...unnumbered.map((event) => `event ${event.id} not numbered`), ...twice, ...sameId].slice(0, 20),
      `${count(events.length)} events written during the run, each with a position of its own`,
    ),
    result(
      'events relayed at least once',
      undelivered
        .map((event) => `event ${event.id} (position ${event.position}) never reached the broker`)
        .slice(0, 20),
      `all ${count(events.length)} at the broker, ${count(repeated)} of them more than once (at least once, D28)`,
    ),
  ];
}
