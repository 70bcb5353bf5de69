import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { activeTraceFields, activeTraceparent, spanContextOf } from './context.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('traceparent (D36)', () => {
  it('reads a W3C traceparent as the remote span it names, sampled or not', () => {
    expect(spanContextOf(`00-${TRACE_ID}-${SPAN_ID}-01`)).toStrictEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
      isRemote: true,
    });
    expect(spanContextOf(`00-${TRACE_ID}-${SPAN_ID}-00`)?.traceFlags).toBe(0);
  });

  it.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['another version', `01-${TRACE_ID}-${SPAN_ID}-01`],
    ['upper-case digits', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['trailing text', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
  ])('names no span with %s', (_case, traceparent) => {
    expect(spanContextOf(traceparent)).toBeUndefined();
  });

  it('has neither a traceparent nor trace fields outside a trace', () => {
    expect({ traceparent: activeTraceparent(), fields: activeTraceFields() }).toStrictEqual({
      traceparent: null,
      fields: {},
    });
  });

  it('has no traceparent without an SDK, even within a span context', () => {
    // The API alone keeps no context: with tracing off, what a request carried is not stored.
    const within = trace.setSpanContext(ROOT_CONTEXT, spanContextOf(`00-${TRACE_ID}-${SPAN_ID}-01`)!);
    expect(context.with(within, activeTraceparent)).toBeNull();
  });
});
