import type { Request } from 'express';
import { z } from '../openapi/zod.js';
import { listeningAddress, requestHost } from './host.js';

/** The app setting that holds PUBLIC_BASE_URL, when configured. */
export const PUBLIC_BASE_URL = 'public base url';

/**
 * The absolute base of every href (D7): PUBLIC_BASE_URL when configured; else taken from the request (its host
 * checked by `checkHost`), and from X-Forwarded-Proto/-Host/-Prefix only when TRUST_PROXY is set (Express's
 * `trust proxy` setting governs protocol and host; `checkHost` admits only http and https).
 */
export function baseUrl(req: Request): string {
  const configured = req.app.get(PUBLIC_BASE_URL) as string | undefined;
  if (configured) return configured;
  const prefix = req.app.get('trust proxy') ? forwardedPrefix(req) : '';
  return `${req.protocol.toLowerCase()}://${requestHost(req) ?? listeningAddress(req)}${prefix}`;
}

function forwardedPrefix(req: Request): string {
  const raw = req.get('x-forwarded-prefix')?.split(',')[0]?.trim() ?? '';
  if (!/^\/[\w\-./~%]*$/.test(raw)) return '';
  return raw.replace(/\/+$/, '');
}

export function href(req: Request, path: string): string {
  return `${baseUrl(req)}${path}`;
}

/** A link (D7): `type` is the HTTP method where the spec shows one; `templated` marks an RFC 6570 href. */
export const linkSchema = z
  .object({ href: z.string(), type: z.string().optional(), templated: z.boolean().optional() })
  .strict()
  .openapi('Link', { description: 'A HAL link (D7); `templated` marks an RFC 6570 href' });

export type Link = z.infer<typeof linkSchema>;

/** `_links` with exactly the relations `names`, each one link. */
export function linksSchema(names: readonly string[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, linkSchema]))).strict();
}

/** A function that turns a path into an absolute href for this request; the base is worked out once for all links. */
export function hrefOf(req: Request): (path: string) => string {
  const base = baseUrl(req);
  return (path) => `${base}${path}`;
}

/**
 * The link to `path` for this request, with the HTTP method as `type` where the spec shows one (D7). An href with
 * RFC 6570 variables (`{pKey}`) is marked `templated: true`, so HAL clients expand it instead of requesting it as is.
 */
export function linkTo(req: Request, path: string, method?: string): Link {
  return {
    href: href(req, path),
    ...(method ? { type: method } : {}),
    ...(path.includes('{') ? { templated: true } : {}),
  };
}
