import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';

declare module 'http' {
  interface IncomingMessage {
    /** The request id (D6): the client's X-Request-Id when it sent a sane one, else a new UUID. */
    id: string;
    /** Logs what went wrong while answering, with the request's id, method and URL on the line. */
    log: RequestLog;
  }
}

export interface RequestLog {
  error(fields: Record<string, unknown>, message: string, ...args: unknown[]): void;
  warn(fields: Record<string, unknown>, message: string, ...args: unknown[]): void;
}

const ACCEPTABLE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;
const SECRET_QUERY_PARAMETER = /([?&][^=&]*(?:token|jwt|auth|secret|password)[^=&]*=)[^&]*/gi;

function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const offered = req.headers['x-request-id'];
  const id = typeof offered === 'string' && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** Access logs never carry credentials: no headers at all, and token-like query parameters masked. */
function safeUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMETER, '$1[REDACTED]');
}

function requestFields(req: Request): { id: string; method: string; url: string; remoteAddress?: string } {
  return { id: req.id, method: req.method, url: safeUrl(req.originalUrl), remoteAddress: req.socket.remoteAddress };
}

/** `req.log`: one object per request, its methods shared, rather than two closures made for every request. */
class RequestScopedLog implements RequestLog {
  constructor(
    private readonly logger: Logger,
    private readonly req: Request,
  ) {}

  error(fields: Record<string, unknown>, message: string, ...args: unknown[]): void {
    this.logger.error({ ...fields, req: requestFields(this.req) }, message, ...args);
  }

  warn(fields: Record<string, unknown>, message: string, ...args: unknown[]): void {
    this.logger.warn({ ...fields, req: requestFields(this.req) }, message, ...args);
  }
}

/** nginx's 499: the client closed the connection before its answer was written (D38). */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Gives every request an id (the client's X-Request-Id when it sends a sane one), echoes it, and writes one
 * access-log line per request carrying it, with the status, the time taken and the token's subject. Written
 * here rather than with pino-http: its three child loggers and wrapped serializers per request were a tenth of
 * the service's CPU time on a simple read (BENCHMARKS.md, F5). Nothing is built per request beyond the line.
 */
export function requestContext(logger: Logger, { traced = true }: { traced?: boolean } = {}): RequestHandler {
  // The access line has fixed fields, none of which a redaction path names, so walking them for one is skipped.
  const accessLog = logger.child({}, { redact: [] });
  return (req, res, next) => {
    const started = performance.now();
    req.id = requestIdOf(req, res);
    req.log = new RequestScopedLog(logger, req);
    // A response emits 'close' once, after 'finish' or when its client went away before it was complete.
    const writeLine = (): void => {
      const statusCode = res.writableFinished ? res.statusCode : CLIENT_CLOSED_REQUEST;
      const level = statusCode >= 500 ? 'error' : 'info';
      if (!accessLog.isLevelEnabled(level)) return;
      const responseTime = Math.round(performance.now() - started);
      const fields = requestFields(req);
      accessLog[level](
        { req: fields, res: { statusCode }, responseTime, actor: req.principal?.subject },
        `${fields.method} ${fields.url} ${statusCode} ${responseTime}ms`,
      );
    };
    // The line is written within the request's trace. Without tracing there is none, and binding to the root
    // context would only cost two look-ups of OpenTelemetry's globals per request (issue 38 item 4).
    res.once('close', traced ? context.bind(context.active(), writeLine) : writeLine);
    next();
  };
}
