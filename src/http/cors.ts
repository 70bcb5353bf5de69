import type { RequestHandler } from 'express';

/** D33: what a page may send besides the simple headers, and what it may read of an answer. */
export const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'X-Request-Id',
  // W3C Trace Context (D36): a page's tracer links its spans to the service's.
  'traceparent',
  'tracestate',
].join(', ');
// WWW-Authenticate tells a page why its token was refused (RFC 6750), e.g. to log in again.
const EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'Link',
  'Retry-After',
  'X-Request-Id',
  'Idempotent-Replayed',
  'WWW-Authenticate',
].join(', ');
/** Browsers cap it lower themselves (Chromium at 2 h); ten minutes keeps a changed setting from lingering long. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * D33: cross-origin access for the listed origins only. It runs before authentication, so a preflight (which a
 * browser sends without the token) is answered 204 here, and every other answer, errors included, carries the
 * headers a page needs to read it. `allowedMethods` names the methods of the path; a path without any is left to
 * the usual 401/404. No credentials: tokens travel in Authorization, never in cookies.
 */
export function cors(origins: readonly string[], allowedMethods: (path: string) => readonly string[]): RequestHandler {
  const listed = new Set(origins);
  return (req, res, next) => {
    if (listed.size === 0) return next();
    res.vary('Origin');
    const origin = req.headers.origin?.toLowerCase();
    if (origin === undefined || !listed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin!);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      const methods = allowedMethods(req.path);
      if (methods.length === 0) return next();
      res.setHeader(
        'Access-Control-Allow-Methods',
        (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', '),
      );
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      res.status(204).end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    next();
  };
}
