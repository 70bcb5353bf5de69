import { context, isSpanContextValid, ROOT_CONTEXT, trace, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const hex2 = (flags: number): string => (flags & 0xff).toString(16).padStart(2, '0');

function activeSpanContext(): SpanContext | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * The W3C `traceparent` of the span active now (a request's, while it is handled), or null with tracing off or
 * outside a trace. Written in the W3C format whatever OTEL_PROPAGATORS says, since it is stored with events (D36).
 */
export function activeTraceparent(): string | null {
  const spanContext = activeSpanContext();
  return spanContext ? `00-${spanContext.traceId}-${spanContext.spanId}-${hex2(spanContext.traceFlags)}` : null;
}

/** The span a stored `traceparent` names, as the remote parent of work done later on its behalf. */
export function spanContextOf(traceparent: string): SpanContext | undefined {
  const match = TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const spanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
  trace_flags?: string;
}

/** What a log line carries to be found from its trace (the field names of OpenTelemetry's log correlation). */
export function activeTraceFields(): TraceFields {
  const spanContext = activeSpanContext();
  if (!spanContext) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId, trace_flags: hex2(spanContext.traceFlags) };
}

/** Runs work that a request set off but that is done for no request (numbering events) outside its trace. */
export function outsideAnyTrace<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}
