import type { Request, RequestHandler } from 'express';
import { ServerError } from './server-error.js';

// A DNS name (labels of letters, digits, '-' and '_', as container names use), IPv4 or a bracketed IPv6, and a port.
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?$`);

/** The host name without its port, lower-cased: what an allow-list entry names. */
function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return name.replace(/\.$/, '').toLowerCase();
}

const hostRefused = (): ServerError =>
  new ServerError(400, 'InvalidHostHeaderException', 'The Host header names no host this service answers for');

/**
 * Issue 15: hrefs are built from the request's host (D7), so a client that sends `Host: evil.example` would get
 * links to it, and a cache in front could hand them to everyone. A host that is no host name at all is always
 * refused; with ALLOWED_HOSTS set, so is every host not on the list. With PUBLIC_BASE_URL set the request's host
 * is not used for links at all. The health probe is exempt: orchestrators call it by address and it has no links.
 */
export function checkHost(allowedHosts: readonly string[] | undefined): RequestHandler {
  const allowed = allowedHosts && new Set(allowedHosts.map(hostName));
  return (req, _res, next) => {
    if (req.path === '/actuator/health') return next();
    const host = requestHost(req);
    if (host === undefined) return next();
    if (host.length > 255 || !HOST.test(host)) return next(hostRefused());
    if (allowed && !allowed.has(hostName(host))) return next(hostRefused());
    next();
  };
}

/** The Host (or, behind a trusted proxy, X-Forwarded-Host) as sent, or undefined without one. */
export function requestHost(req: Request): string | undefined {
  return req.host || undefined;
}

/** Where a request without a Host header arrived: the listening address, never a name a client chose. */
export function listeningAddress(req: Request): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}
