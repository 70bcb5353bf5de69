import type { Request } from 'express';

/**
 * The absolute base of every href (D7): taken from the request, and from X-Forwarded-Proto/-Host/-Prefix only
 * when TRUST_PROXY is set (Express's `trust proxy` setting governs protocol and host).
 */
export function baseUrl(req: Request): string {
  const prefix = req.app.get('trust proxy') ? forwardedPrefix(req) : '';
  return `${req.protocol}://${req.host}${prefix}`;
}

function forwardedPrefix(req: Request): string {
  const raw = req.get('x-forwarded-prefix')?.split(',')[0]?.trim() ?? '';
  if (!/^\/[\w\-./~%]*$/.test(raw)) return '';
  return raw.replace(/\/+$/, '');
}

export function href(req: Request, path: string): string {
  return `${baseUrl(req)}${path}`;
}

export interface Link {
  href: string;
  type?: string;
}

/** A function that turns a path into an absolute href for this request. */
export function hrefOf(req: Request): (path: string) => string {
  return (path) => href(req, path);
}
