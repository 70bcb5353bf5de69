import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const ACCEPTABLE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;
const SECRET_QUERY_PARAMETER = /([?&][^=&]*(?:token|jwt|auth|secret|password)[^=&]*=)[^&]*/gi;

function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const offered = req.headers['x-request-id'];
  const id = typeof offered === 'string' && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** Access logs never carry credentials: no headers at all, and token-like query parameters masked. */
function safeUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY_PARAMETER, '$1[REDACTED]');
}

/**
 * Gives every request an id (the client's X-Request-Id when it sends a sane one), echoes it, and writes one
 * access-log line per request carrying it.
 */
export function requestContext(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: requestIdOf,
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: (req, res, responseTime) =>
      `${req.method} ${safeUrl(req.url)} ${res.statusCode} ${Math.round(responseTime)}ms`,
    customErrorMessage: (req, res) => `${req.method} ${safeUrl(req.url)} ${res.statusCode}`,
    serializers: {
      req: (req: { id: string; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: safeUrl(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customProps: (req) => ({ actor: (req as { principal?: { subject: string } }).principal?.subject }),
  }) as unknown as RequestHandler;
}
