import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Request, RequestHandler } from 'express';

const tracer = trace.getTracer('inventory-service');

/** Probes and metric scrapes arrive every few seconds and say nothing about a request: no trace for them. */
const isOperatorPath = (path: string): boolean => path.startsWith('/actuator/');

/**
 * A server span per request (D36), named by its route once the route is known (`POST /v1/products`), with the
 * attributes of OpenTelemetry's HTTP semantic conventions. It continues a caller's trace (`traceparent` with the
 * default propagators) and is the active span while the request is handled, so its SQL and events join it.
 *
 * Written here rather than taken from `@opentelemetry/instrumentation-http`: that instrumentation wraps every
 * request's and response's event emitters and reads every header on the way in and out, which made a traced read
 * cost 2.3 times the CPU of an untraced one (bench/notes.md, issue 38). This does what the spans need and no more.
 */
export function serverSpans(routeOf: (req: Request) => string | undefined): RequestHandler {
  return (req, res, next) => {
    if (isOperatorPath(req.path)) return next();
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': req.path,
          'url.scheme': req.protocol,
          'network.peer.address': req.socket.remoteAddress,
          'user_agent.original': req.headers['user-agent'],
        },
      },
      parent,
    );
    // 'close' comes once, after the answer was sent or when the client left before it was complete.
    res.once('close', () => {
      const route = routeOf(req);
      if (route !== undefined) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      else if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'client went away' });
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
