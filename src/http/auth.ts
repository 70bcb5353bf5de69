import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Identity } from '../auth/identity.js';
import { TokenRefused, type Principal } from '../auth/principal.js';
import { ApiError } from './api-error.js';
import { bearerChallenge, unauthorized } from './server-error.js';

export type { Principal } from '../auth/principal.js';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i;

/**
 * Checks the bearer token on every request that is not public, before routing (D5: an unknown protected
 * path without a token is 401). Tokens are read from the Authorization header only, never the query string.
 * Identity (src/auth/) answers who sent it; a token it knows already costs no promise.
 */
export function authenticate(identity: Identity, isPublic: (req: Request) => boolean): RequestHandler {
  const verify = async (token: string, req: Request, next: NextFunction): Promise<void> => {
    try {
      req.principal = await identity.verify(token);
    } catch (error) {
      if (error instanceof TokenRefused) return next(unauthorized(error.message, true));
      throw error;
    }
    next();
  };
  return (req: Request, _res: Response, next: NextFunction) => {
    if (isPublic(req)) return next();
    const header = req.headers.authorization;
    if (!header)
      return next(unauthorized('Full authentication is required: send an Authorization: Bearer token', false));
    const match = BEARER.exec(header);
    if (!match?.[1])
      return next(unauthorized('The Authorization header must use the Bearer scheme with a token', true));
    const known = identity.known(match[1]);
    if (!known) return verify(match[1], req, next);
    req.principal = known;
    next();
  };
}

/** Scopes a token must carry (from the claims in AUTH_SCOPE_CLAIMS) to read or to write; empty lists check nothing. */
export interface RequiredScopes {
  readonly read: readonly string[];
  readonly write: readonly string[];
}

/**
 * Issue 7: with AUTH_REQUIRED_SCOPES_READ / _WRITE set, a token without every required scope is a 403 in the
 * API-declined format, e.g. a read-only token that tries to write; RFC 6750 names the scope in WWW-Authenticate.
 * Public routes carry no principal.
 */
export function requireScopes(required: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    if (required.length === 0 || !req.principal) return next();
    const missing = required.filter((scope) => !req.principal!.scopes.includes(scope));
    if (missing.length === 0) return next();
    const message = `The bearer token lacks the scope ${missing.join(', ')}`;
    next(
      new ApiError(403, 'owms.common.auth.insufficientScope', message, {
        obj: missing,
        headers: { 'WWW-Authenticate': bearerChallenge('insufficient_scope', message, required.join(' ')) },
      }),
    );
  };
}
