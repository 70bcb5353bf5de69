import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { spanContextOf } from './context.js';

const tracer = trace.getTracer('inventory-service');

export interface OutgoingMessage {
  readonly exchange: string;
  readonly routingKey: string;
  readonly messageId: string;
  /** The stored `traceparent` of the request that caused the message, if any. */
  readonly cause: string | null;
}

/**
 * Sends a message as part of its cause's trace (D36): a producer span, child of the cause, lasts until `send`
 * settles, and the headers `send` gets carry that span on (`traceparent` with the default propagators), so a
 * consumer's work joins the trace. A message without a cause gets neither: a span of its own would start a trace
 * per message. With tracing off the API is a no-op and the headers stay empty.
 */
export async function sendInTrace<T>(
  message: OutgoingMessage,
  send: (traceHeaders: Record<string, string>) => Promise<T>,
): Promise<T> {
  const cause = message.cause === null ? undefined : spanContextOf(message.cause);
  if (!cause) return send({});
  const parent = trace.setSpanContext(ROOT_CONTEXT, cause);
  const span = tracer.startSpan(
    `publish ${message.exchange}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': message.exchange,
        'messaging.rabbitmq.destination.routing_key': message.routingKey,
        'messaging.message.id': message.messageId,
      },
    },
    parent,
  );
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), headers);
  try {
    return await send(headers);
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
