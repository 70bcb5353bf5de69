import { createPublicKey, createSecretKey } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import jwt from 'jsonwebtoken';
import type { AuthConfig } from '../config.js';
import { ApiError } from './api-error.js';
import { unauthorized } from './server-error.js';

export interface Principal {
  /** The token's `sub`, recorded as the actor of every stock change (D5). */
  readonly subject: string;
  readonly scopes: readonly string[];
  /** When the token stops being accepted (its `exp` plus the clock tolerance), in epoch milliseconds. */
  readonly expiresAtMs: number;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export interface TokenVerifier {
  readonly algorithm: jwt.Algorithm;
  verify(token: string): Principal;
}

// Tokens signed a moment in the future by a server with a slightly fast clock are still accepted.
const CLOCK_TOLERANCE_SECONDS = 30;

function algorithmForPublicKey(pem: string): jwt.Algorithm {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    if (key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
    throw new Error(
      `AUTH_JWT_PUBLIC_KEY: EC keys must be on curve P-256 for ES256, not ${key.asymmetricKeyDetails?.namedCurve ?? 'unknown'}`,
    );
  }
  throw new Error(
    `AUTH_JWT_PUBLIC_KEY: unsupported key type ${key.asymmetricKeyType ?? 'unknown'}; use an RSA or EC P-256 key`,
  );
}

function describeFailure(error: unknown): string {
  if (error instanceof jwt.TokenExpiredError) return 'The bearer token has expired';
  if (error instanceof jwt.NotBeforeError) return 'The bearer token is not valid yet';
  if (error instanceof jwt.JsonWebTokenError) {
    const reason = error.message;
    if (reason === 'invalid signature') return 'The bearer token has an invalid signature';
    if (reason === 'jwt malformed' || reason === 'invalid token' || reason.startsWith('Unexpected token')) {
      return 'The bearer token is malformed';
    }
    if (reason === 'invalid algorithm' || reason === 'jwt signature is required') {
      return 'The bearer token is signed with an algorithm that is not accepted';
    }
    if (reason.startsWith('jwt audience invalid')) return 'The bearer token is for another audience';
    if (reason.startsWith('jwt issuer invalid')) return 'The bearer token is from another issuer';
    return 'The bearer token is invalid';
  }
  return 'The bearer token is invalid';
}

function scopesOf(payload: jwt.JwtPayload): string[] {
  const raw: unknown = payload.scope ?? payload.scp;
  if (typeof raw === 'string') return raw.split(' ').filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((item): item is string => typeof item === 'string');
  return [];
}

/** Verifies with exactly one configured algorithm, so `alg: none` and algorithm confusion are refused. */
export function createTokenVerifier(auth: AuthConfig): TokenVerifier {
  if (!auth.publicKey && !auth.secret) throw new Error('No token key configured');
  const algorithm = auth.publicKey ? algorithmForPublicKey(auth.publicKey) : 'HS256';
  // A key object built once: given a string, jsonwebtoken tries to parse it as a PEM key on every request.
  const key = auth.publicKey ? createPublicKey(auth.publicKey) : createSecretKey(Buffer.from(auth.secret!, 'utf8'));
  const options: jwt.VerifyOptions & { complete: false } = {
    algorithms: [algorithm],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    complete: false,
    ...(auth.issuer ? { issuer: auth.issuer } : {}),
    ...(auth.audience ? { audience: auth.audience } : {}),
  };
  const verified = new VerifiedTokens();
  return {
    algorithm,
    verify(token: string): Principal {
      const known = verified.get(token);
      if (known) return known;
      let payload: string | jwt.JwtPayload;
      try {
        payload = jwt.verify(token, key, options);
      } catch (error) {
        throw unauthorized(describeFailure(error), true);
      }
      if (typeof payload === 'string') throw unauthorized('The bearer token is malformed', true);
      if (typeof payload.exp !== 'number') throw unauthorized('The bearer token has no expiry (exp)', true);
      // The subject is the actor of every change and scopes Idempotency-Keys: tokens without one would share both.
      if (typeof payload.sub !== 'string' || payload.sub.trim() === '') {
        throw unauthorized('The bearer token names no subject (sub)', true);
      }
      const nowSeconds = Date.now() / 1000;
      if (payload.iat !== undefined) {
        if (typeof payload.iat !== 'number') throw unauthorized('The bearer token is malformed', true);
        if (payload.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS) {
          throw unauthorized('The bearer token was issued in the future (iat)', true);
        }
      }
      if (auth.maxLifetimeSeconds !== undefined) {
        const lifetime = payload.exp - (payload.iat ?? nowSeconds);
        if (lifetime > auth.maxLifetimeSeconds + CLOCK_TOLERANCE_SECONDS) {
          throw unauthorized(`The bearer token lives longer than the ${auth.maxLifetimeSeconds} s allowed`, true);
        }
      }
      const expiresAtMs = (payload.exp + CLOCK_TOLERANCE_SECONDS) * 1000;
      const principal = { subject: payload.sub, scopes: scopesOf(payload), expiresAtMs };
      verified.add(token, principal);
      return principal;
    },
  };
}

/**
 * Tokens that passed verification, until they expire. A client sends the same token with every request, and
 * checking it again (a signature and two JSON parses) was a twentieth of a simple read's CPU time. Keyed by the
 * whole token, signature included; only successes are kept, the expiry is checked on every use, and the oldest
 * entry makes room when the cache is full.
 */
class VerifiedTokens {
  private static readonly CAPACITY = 10_000;
  private readonly entries = new Map<string, Principal>();

  get(token: string): Principal | undefined {
    const principal = this.entries.get(token);
    if (!principal) return undefined;
    // jsonwebtoken's rule: expired from (exp + tolerance) seconds on; the caller then verifies and says why.
    if (Date.now() < principal.expiresAtMs) return principal;
    this.entries.delete(token);
    return undefined;
  }

  add(token: string, principal: Principal): void {
    if (this.entries.size >= VerifiedTokens.CAPACITY) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, principal);
  }
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i;

/**
 * Checks the bearer token on every request that is not public, before routing (D5: an unknown protected
 * path without a token is 401). Tokens are read from the Authorization header only, never the query string.
 */
export function authenticate(verifier: TokenVerifier, isPublic: (req: Request) => boolean): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (isPublic(req)) return next();
    const header = req.headers.authorization;
    if (!header)
      return next(unauthorized('Full authentication is required: send an Authorization: Bearer token', false));
    const match = BEARER.exec(header);
    if (!match?.[1])
      return next(unauthorized('The Authorization header must use the Bearer scheme with a token', true));
    req.principal = verifier.verify(match[1]);
    next();
  };
}

/** Scopes a token must carry (`scope` or `scp`) to read or to write; empty lists check nothing. */
export interface RequiredScopes {
  readonly read: readonly string[];
  readonly write: readonly string[];
}

/**
 * Issue 7: with AUTH_REQUIRED_SCOPES_READ / _WRITE set, a token without every required scope is a 403 in the
 * API-declined format, e.g. a read-only token that tries to write. Public routes carry no principal.
 */
export function requireScopes(required: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    if (required.length === 0 || !req.principal) return next();
    const missing = required.filter((scope) => !req.principal!.scopes.includes(scope));
    if (missing.length === 0) return next();
    next(
      new ApiError(
        403,
        'owms.common.auth.insufficientScope',
        `The bearer token lacks the scope ${missing.join(', ')}`,
        {
          obj: missing,
        },
      ),
    );
  };
}
