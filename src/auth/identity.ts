import { jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { AuthConfig } from '../config.js';
import { scopesOf, subjectOf } from './claims.js';
import { describeFailure } from './failures.js';
import { publicKeyOf, secretKeyOf } from './fixed-keys.js';
import { CLOCK_TOLERANCE_SECONDS, TokenRefused, type Principal } from './principal.js';
import { PROVIDER_ALGORITHMS, ProviderKeys } from './provider-keys.js';
import { VerifiedTokens } from './verified-tokens.js';

/** The one question the web layer asks: who is this and what may they do. */
export interface Identity {
  /** A principal for a token verified before and not expired, without any work; else undefined. */
  known(token: string): Principal | undefined;
  /** Verifies the token; rejects with TokenRefused saying why. */
  verify(token: string): Promise<Principal>;
  /** False until a provider's keys were read once (readiness); always true with a secret or a PEM key. */
  readonly ready: boolean;
}

export interface IdentityEvents {
  readonly onProblem?: (message: string, error: unknown) => void;
}

interface KeySource {
  readonly key: KeyObject | JWTVerifyGetKey;
  readonly algorithms: readonly string[];
  issuer(): Promise<string | undefined>;
  /** Starts fetching a provider's key set in the background when it has grown stale. */
  refreshWhenStale(nowMs: number): void;
  readonly ready: boolean;
}

function keySourceOf(auth: AuthConfig, onKeysChanged: () => void, events: IdentityEvents): KeySource {
  if (auth.oidcIssuerUrl || auth.jwksUrl) {
    const provider = new ProviderKeys(
      {
        oidcIssuerUrl: auth.oidcIssuerUrl,
        jwksUrl: auth.jwksUrl,
        issuer: auth.issuer,
        refreshMs: auth.jwksRefreshSeconds * 1000,
      },
      { onKeysChanged, onProblem: events.onProblem ?? (() => undefined) },
    );
    provider.warmUp();
    return {
      key: provider.getKey,
      algorithms: PROVIDER_ALGORITHMS,
      issuer: () => provider.issuerForVerification(),
      refreshWhenStale: (nowMs) => provider.refreshWhenStale(nowMs),
      get ready() {
        return provider.ready;
      },
    };
  }
  if (!auth.publicKey && !auth.secret) throw new Error('No token key configured');
  const fixed = auth.publicKey ? publicKeyOf(auth.publicKey) : secretKeyOf(auth.secret!);
  return { ...fixed, issuer: () => Promise.resolve(auth.issuer), refreshWhenStale: () => undefined, ready: true };
}

function checkTimes(payload: JWTPayload, maxLifetimeSeconds: number | undefined): void {
  const nowSeconds = Date.now() / 1000;
  if (payload.iat !== undefined && payload.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS) {
    throw new TokenRefused('The bearer token was issued in the future (iat)');
  }
  if (maxLifetimeSeconds !== undefined) {
    const lifetime = payload.exp! - (payload.iat ?? nowSeconds);
    if (lifetime > maxLifetimeSeconds + CLOCK_TOLERANCE_SECONDS) {
      throw new TokenRefused(`The bearer token lives longer than the ${maxLifetimeSeconds} s allowed`);
    }
  }
}

/**
 * Identity from the configured key source (D37): a shared secret (HS256), a PEM public key, or an OpenID Connect
 * provider's key set. jose verifies: only algorithms that fit the key, unknown `crit` parameters refused, `exp`
 * required, issuer and audience when configured. Throws at start for a key the service cannot verify with.
 */
export function createIdentity(auth: AuthConfig, events: IdentityEvents = {}): Identity {
  const verified = new VerifiedTokens();
  const source = keySourceOf(auth, () => verified.clear(), events);
  const baseOptions: JWTVerifyOptions = {
    algorithms: [...source.algorithms],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp'],
    ...(auth.audience ? { audience: auth.audience } : {}),
  };
  return {
    known: (token) => {
      const nowMs = Date.now();
      source.refreshWhenStale(nowMs);
      return verified.get(token, nowMs);
    },
    get ready() {
      return source.ready;
    },
    async verify(token: string): Promise<Principal> {
      const nowMs = Date.now();
      source.refreshWhenStale(nowMs);
      const known = verified.get(token, nowMs);
      if (known) return known;
      let payload: JWTPayload;
      try {
        const issuer = await source.issuer();
        const options = issuer ? { ...baseOptions, issuer } : baseOptions;
        // jose's overloads differ only by the key's type.
        ({ payload } =
          typeof source.key === 'function'
            ? await jwtVerify(token, source.key, options)
            : await jwtVerify(token, source.key, options));
      } catch (error) {
        throw new TokenRefused(describeFailure(error));
      }
      checkTimes(payload, auth.maxLifetimeSeconds);
      const principal: Principal = {
        subject: subjectOf(payload),
        scopes: scopesOf(payload, auth.scopeClaims),
        expiresAtMs: (payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000,
      };
      verified.add(token, principal);
      return principal;
    },
  };
}
