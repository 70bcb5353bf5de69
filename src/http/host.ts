import type { Request, RequestHandler } from 'express';
import { isIPv6 } from 'node:net';
import { ServerError } from './server-error.js';

// A DNS name (labels of letters, digits, '-' and '_', as container names use), IPv4 or a bracketed IPv6, and a port.
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOST = new RegExp(`^(?:(${LABEL}(?:\\.${LABEL})*)\\.?|\\[([0-9A-Fa-f:.]+)\\])(?::(\\d{1,5}))?$`);
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/**
 * Issue 37: the shape alone let `localhost:99999` and `127.999.999.999` through. A name whose last label is a number
 * is an IPv4 address to every URL parser (WHATWG), so it must be one; a port is 1–65535; IPv6 must parse.
 */
export function isValidHost(host: string): boolean {
  const match = host.length <= 255 ? HOST.exec(host) : null;
  if (!match) return false;
  const [, name, ipv6, port] = match;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
  if (ipv6 !== undefined) return isIPv6(ipv6);
  return !/^\d+$/.test(name!.split('.').at(-1)!) || IPV4.test(name!);
}

/** Behind a trusted proxy the protocol is X-Forwarded-Proto's first value: only these become hrefs (D41). */
const FORWARDED_PROTOCOLS = new Set(['http', 'https']);

/** Host values whose names `checkHost` keeps; past that it starts afresh (a client sending random ones gains nothing). */
const MAX_REMEMBERED_HOSTS = 256;

/** The host name without its port, lower-cased: what an allow-list entry names. */
function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return name.replace(/\.$/, '').toLowerCase();
}

const hostRefused = (): ServerError =>
  new ServerError(400, 'InvalidHostHeaderException', 'The Host header names no host this service answers for');

const protocolRefused = (): ServerError =>
  new ServerError(400, 'InvalidForwardedHeaderException', 'X-Forwarded-Proto must be http or https');

/** What orchestrators and scrapers call by address (a pod's IP): the probes and the metrics, none with links. */
const BY_ADDRESS_PATHS = new Set([
  '/actuator/health',
  '/actuator/health/liveness',
  '/actuator/health/readiness',
  '/actuator/prometheus',
]);

/** Where the hosts a request may name come from (README, Configuration). */
export interface HostSettings {
  readonly allowedHosts?: readonly string[];
  readonly publicBaseUrl?: string;
  /** HOST: the address the service listens on, when one is chosen. */
  readonly listenHost?: string;
}

const isLoopback = (name: string): boolean =>
  name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(name);

/**
 * Issue 15 and D36: hrefs are built from the request's host (D7), so a client that sends `Host: evil.example`
 * would get links to it, and a cache in front could hand them to everyone. A host that is no host name at all is
 * always refused. With ALLOWED_HOSTS, every host not on the list is refused too. With PUBLIC_BASE_URL alone the
 * request's host is not used for links, so any host name is answered. With neither, only what cannot have been
 * chosen by a stranger is answered, as Django does: localhost, loopback addresses and the address the request
 * arrived at (or HOST). The probes and the metrics are exempt: they are called by address and have no links.
 */
export function checkHost({ allowedHosts, publicBaseUrl, listenHost }: HostSettings): RequestHandler {
  const listed = allowedHosts && new Set(allowedHosts.map(hostName));
  const listening = listenHost && hostName(listenHost.includes(':') ? `[${listenHost}]` : listenHost);
  const answers = (req: Request, name: string): boolean => {
    if (listed) return listed.has(name);
    return (
      publicBaseUrl !== undefined || isLoopback(name) || name === listening || name === hostName(listeningAddress(req))
    );
  };
  // Clients send the same few Host values again and again: the name each one stands for (or false, no host name)
  // is worked out once, not with three regular expressions per request (issue 38 item 4).
  const names = new Map<string, string | false>();
  const nameOf = (host: string): string | false => {
    let name = names.get(host);
    if (name === undefined) {
      name = isValidHost(host) && hostName(host);
      if (names.size >= MAX_REMEMBERED_HOSTS) names.clear();
      names.set(host, name);
    }
    return name;
  };
  return (req, _res, next) => {
    if (BY_ADDRESS_PATHS.has(req.path)) return next();
    const host = requestHost(req);
    if (host !== undefined) {
      const name = nameOf(host);
      if (name === false || !answers(req, name)) return next(hostRefused());
    }
    if (!FORWARDED_PROTOCOLS.has(req.protocol.toLowerCase())) return next(protocolRefused());
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
