import { randomUUID } from 'node:crypto';
import { Connection, type AsyncMessage } from 'rabbitmq-client';
import { BROKER_URL } from './broker.js';

/** What a consumer of the exchange sees of one delivered message (D28's properties). */
export interface Received {
  readonly routingKey: string;
  readonly messageId: string | undefined;
  readonly correlationId: string | undefined;
  readonly ownsEventType: unknown;
  /** D36: the header that carries the trace of the request that caused the event. */
  readonly traceparent: unknown;
  readonly deliveryMode: number | undefined;
  readonly contentType: string | undefined;
  readonly timestamp: number | undefined;
  readonly redelivered: boolean;
  /** The body, parsed when it is application/json (as rabbitmq-client does). */
  readonly body: unknown;
}

export interface EventConsumer {
  readonly queue: string;
  /** Every delivery so far, in arrival order (redeliveries included). */
  readonly received: Received[];
  /** When each of `received` arrived (Date.now()), index by index. */
  readonly arrivedAt: number[];
  /** Resolves once `predicate` holds for the deliveries so far; fails after `ms` with what arrived. */
  waitFor(predicate: (received: readonly Received[]) => boolean, ms: number, what: string): Promise<void>;
  /** Resolves once a message with this id has arrived. */
  waitForId(messageId: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ConsumerOptions {
  /** The binding pattern; `#` takes every event. */
  readonly pattern?: string;
  /**
   * A durable queue survives a broker restart with its persistent messages (deleted at close); otherwise the
   * queue is exclusive to this consumer's connection.
   */
  readonly durable?: boolean;
  /**
   * Declares the exchange as D28 has the service declare it (durable topic), for a queue that must be bound
   * before the service first publishes; a relay declaring it otherwise then fails on it.
   */
  readonly declareExchange?: boolean;
}

function toReceived(message: AsyncMessage): Received {
  return {
    routingKey: message.routingKey,
    messageId: message.messageId,
    correlationId: message.correlationId,
    ownsEventType: message.headers?.owms_event_type,
    traceparent: message.headers?.traceparent,
    deliveryMode: (message as AsyncMessage & { deliveryMode?: number }).deliveryMode,
    contentType: message.contentType,
    timestamp: message.timestamp,
    redelivered: message.redelivered,
    body: message.body,
  };
}

/**
 * A queue bound to `exchange` and a consumer collecting what arrives, as a system around the service would bind
 * one. The exchange is not declared here: the relay must have declared it (D28). The consumer reconnects by
 * itself after a broker restart.
 */
export async function consumeExchange(exchange: string, options: ConsumerOptions = {}): Promise<EventConsumer> {
  const queue = `inventory-test-${randomUUID()}`;
  const durable = options.durable ?? false;
  const connection = new Connection({
    url: BROKER_URL,
    connectionName: `test consumer ${queue}`,
    retryLow: 200,
    retryHigh: 1000,
  });
  connection.on('error', () => undefined);
  const received: Received[] = [];
  const arrivedAt: number[] = [];
  const consumer = connection.createConsumer(
    {
      queue,
      queueOptions: { durable, exclusive: !durable, autoDelete: false },
      exchanges: options.declareExchange ? [{ exchange, type: 'topic', durable: true }] : [],
      queueBindings: [{ queue, exchange, routingKey: options.pattern ?? '#' }],
      qos: { prefetchCount: 1000 },
    },
    (message) => {
      received.push(toReceived(message));
      arrivedAt.push(Date.now());
    },
  );
  consumer.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the queue ${queue} was not bound to ${exchange}`)), 10_000);
    consumer.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });

  const waitFor: EventConsumer['waitFor'] = async (predicate, ms, what) => {
    for (const deadline = Date.now() + ms; !predicate(received);) {
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${ms} ms waiting for ${what}; ${received.length} messages arrived`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    queue,
    received,
    arrivedAt,
    waitFor,
    waitForId: (messageId, ms = 10_000) =>
      waitFor((all) => all.some((message) => message.messageId === messageId), ms, `message ${messageId}`),
    async close() {
      await consumer.close();
      if (durable) await connection.queueDelete({ queue }).catch(() => undefined);
      await connection.close();
    },
  };
}

/** Deletes an exchange the test run created (they are durable: they would outlive the run). */
export async function deleteExchange(exchange: string): Promise<void> {
  const connection = new Connection({ url: BROKER_URL, retryLow: 200 });
  connection.on('error', () => undefined);
  try {
    await connection.exchangeDelete({ exchange });
  } finally {
    await connection.close();
  }
}
