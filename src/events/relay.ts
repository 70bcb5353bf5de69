import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import type { Logger } from 'pino';
import { AMQPError, Connection, type Publisher } from 'rabbitmq-client';
import { sendInTrace } from '../tracing/messaging.js';
import type { FeedSignal } from './feed-signal.js';
import { acquireRelayLease, advancePublished, releaseRelayLease, selectEventsAfter, type StoredEvent } from './sql.js';

const BATCH_SIZE = 1000;
// Batches sent and awaiting the broker's confirms at once; the broker holds at most this many × BATCH_SIZE events
// unconfirmed from one relay.
const BATCHES_IN_FLIGHT = 3;
// Renewed with every batch and at least every IDLE_MS; an instance that stops renewing (killed, frozen) hands over
// after this long, so publishing resumes within about 3–4 s of a crash (issue 29). A holder that is merely slow for
// longer loses the lease to another: events may then be published twice (at least once, D28), never skipped,
// because only the lease holder moves the published mark.
const LEASE_MS = 3_000;
// Without news of events, a relay still looks every so often: for a lease to take over, and for missed news.
const IDLE_MS = 1000;
// After a batch, news of events waits this long before the next: under load a batch then carries the events of
// many commits, and its fixed cost (lease, select, mark) is paid once for them.
const GATHER_MS = 20;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
// A database that fails is tried again sooner than a broker: after a failover (issue 37) publishing resumes within
// about 2 s of the new primary answering, where doubling on to 30 s could leave it idle up to as long again as the
// outage lasted.
const DATABASE_RETRY_MAX_MS = 2_000;

/** A batch on its way: the broker has confirmed it once `confirmed` resolves. */
interface SentBatch {
  readonly through: number;
  readonly count: number;
  readonly confirmed: Promise<void>;
}

/** What the health check reports of the broker (D28). */
export type BrokerState = 'connected' | 'unreachable' | 'refusing';

export interface RelaySettings {
  readonly url: string;
  readonly exchange: string;
}

/** D28: the last word of the type is the `owms_event_type` header (`pu.event.moved` → `moved`). */
function shortType(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}

/**
 * The only code that talks to the broker (D28). Publishes numbered events in position order, in batches with
 * publisher confirms, and records how far it got after the broker confirmed; so every event is published at
 * least once, and those of one resource in commit order. One instance at a time holds the lease to publish;
 * the others stand by. A broker that is down or refuses costs requests nothing: the relay waits with backoff
 * and the events wait in the outbox.
 */
export class EventRelay {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly connection: Connection;
  private readonly publisher: Publisher;
  // What the last exchange with the broker showed; `connecting` until the first one.
  private broker: BrokerState | 'connecting' = 'connecting';
  // Set once the exchange is declared on the current connection; a refused publish clears it to declare again.
  private declared = false;
  private leader = false;
  private stopped = false;
  private pending = false;
  private wake: (() => void) | undefined;
  private wakeForBroker: (() => void) | undefined;
  private readonly loop: Promise<void>;
  private readonly stopListening: () => void;

  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: RelaySettings,
    private readonly signal: FeedSignal,
    private readonly logger: Logger,
    private readonly onPublished: (count: number) => void,
  ) {
    this.connection = new Connection({
      url: settings.url,
      connectionName: `inventory-service ${this.owner}`,
      retryLow: RETRY_MIN_MS,
      retryHigh: RETRY_MAX_MS,
      connectionTimeout: 5000,
    });
    // The exchange is declared at once on every (re)connection, so queues can be bound before the first event.
    this.connection.on('connection', () => {
      this.declared = false;
      this.wakeForBroker?.();
    });
    this.connection.on('error', (error: unknown) => this.brokerIs('unreachable', error));
    this.publisher = this.connection.createPublisher({ confirm: true, maxAttempts: 1 });
    this.stopListening = signal.onAdvance(() => this.kick());
    this.loop = this.run();
  }

  /** Whether this instance can reach the broker and the broker accepts its events (reported by health). */
  get brokerState(): BrokerState {
    if (!this.connection.ready) return 'unreachable';
    return this.broker === 'connecting' ? 'unreachable' : this.broker;
  }

  /** Records what the broker showed, with a log line whenever that changes. */
  private brokerIs(state: BrokerState, error?: unknown): void {
    if (state !== this.broker) {
      const { exchange } = this.settings;
      if (state === 'connected') this.logger.info({ exchange }, 'event broker connected: publishing events');
      else if (state === 'refusing') {
        this.logger.warn({ err: error, exchange }, 'event broker refuses the events: they wait in the outbox');
      } else this.logger.warn({ err: error }, 'event broker unreachable: events wait in the outbox until it is back');
    }
    this.broker = state;
  }

  private kick(): void {
    this.pending = true;
    this.wake?.();
  }

  /**
   * Waits `ms`, or less when woken: by news of events unless `onlyForBroker`, by the broker coming back. Not at all
   * once stopped: `stop` wakes only a sleep already begun, and one begun after a backlog it cut short would hold it.
   */
  private sleep(ms: number, onlyForBroker = false): Promise<void> {
    if (this.stopped || (this.pending && !onlyForBroker)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = onlyForBroker ? undefined : done;
      this.wakeForBroker = done;
    });
  }

  private async run(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    while (!this.stopped) {
      this.pending = false;
      try {
        await this.publishBacklog();
        retryMs = RETRY_MIN_MS;
        await delay(GATHER_MS);
        await this.sleep(IDLE_MS);
      } catch (error) {
        const fromBroker = error instanceof AMQPError;
        if (!fromBroker) this.logger.warn({ err: error }, 'publishing events failed; retrying');
        else if (!this.connection.ready) this.brokerIs('unreachable', error);
        else {
          // Connected but refused (the exchange has another type, was deleted, access denied): declare again.
          this.declared = false;
          this.brokerIs('refusing', error);
        }
        // Not cut short by news of events: under load that would retry a refusing broker in a busy loop.
        await this.sleep(retryMs, true);
        retryMs = Math.min(retryMs * 2, fromBroker ? RETRY_MAX_MS : DATABASE_RETRY_MAX_MS);
      }
    }
  }

  /**
   * Publishes while this instance holds the lease, until nothing more is numbered. Batches are pipelined: up to
   * BATCHES_IN_FLIGHT are sent and await the broker's confirms while the next is read, so the broker's round trip
   * and the database's overlap instead of adding up (bench scenario 16: 10,581 events/s to a consumer). The mark
   * moves batch by batch in position order, each only once the broker has confirmed that batch and every one before.
   */
  private async publishBacklog(): Promise<void> {
    if (!this.connection.ready) return;
    if (!this.declared) {
      await this.connection.exchangeDeclare({ exchange: this.settings.exchange, type: 'topic', durable: true });
      this.declared = true;
      this.brokerIs('connected');
    }
    const { exchange } = this.settings;
    const publishedThrough = await acquireRelayLease(this.pool, exchange, this.owner, LEASE_MS);
    this.leader = publishedThrough !== undefined;
    if (publishedThrough === undefined) return;
    const inFlight: SentBatch[] = [];
    let sentThrough = publishedThrough;
    for (;;) {
      // A partial batch means the outbox is read to its end for now: the next read waits for a confirm.
      let full = true;
      while (full && inFlight.length < BATCHES_IN_FLIGHT && !this.stopped) {
        const events = await selectEventsAfter(this.pool, sentThrough, BATCH_SIZE);
        full = events.length === BATCH_SIZE;
        if (events.length === 0) break;
        sentThrough = events[events.length - 1]!.position;
        inFlight.push(this.sendBatch(events, sentThrough));
      }
      const oldest = inFlight.shift();
      if (!oldest) return;
      await oldest.confirmed;
      // Renews the lease too; false when another instance has taken it over meanwhile.
      if (!(await advancePublished(this.pool, exchange, this.owner, oldest.through, LEASE_MS))) {
        this.leader = false;
        return;
      }
      this.brokerIs('connected');
      this.onPublished(oldest.count);
      if (inFlight.length === 0 && !full) return;
    }
  }

  /** Sends a batch in position order on the one channel; `confirmed` settles when the broker has confirmed all. */
  private sendBatch(events: readonly StoredEvent[], through: number): SentBatch {
    const confirmed = Promise.all(events.map((event) => this.publish(event))).then(() => undefined);
    // Awaited in turn; one that fails while an earlier is awaited must not count as unhandled meanwhile. Batches
    // left behind by an error or a lost lease are published again from the mark: at least once (D28).
    confirmed.catch(() => undefined);
    return { through, count: events.length, confirmed };
  }

  /** D28's message; D36: in the trace of the request that caused the event, carried on by its headers. */
  private publish(event: StoredEvent): Promise<void> {
    const { exchange } = this.settings;
    const message = { exchange, routingKey: event.type, messageId: event.id, cause: event.traceparent };
    return sendInTrace(message, (traceHeaders) =>
      this.publisher.send(
        {
          exchange,
          routingKey: event.type,
          messageId: event.id,
          correlationId: event.requestId ?? undefined,
          timestamp: Math.floor(event.occurredAt.getTime() / 1000),
          contentType: 'application/json',
          durable: true,
          headers: { owms_event_type: shortType(event.type), ...traceHeaders },
        },
        Buffer.from(event.resource),
      ),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopListening();
    this.wakeForBroker?.();
    await this.loop;
    if (this.leader) {
      await releaseRelayLease(this.pool, this.settings.exchange, this.owner).catch(() => undefined);
    }
    await this.publisher.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
