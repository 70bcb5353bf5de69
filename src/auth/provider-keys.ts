import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { discover, PROVIDER_TIMEOUT_MS } from './discovery.js';
import { TokenRefused } from './principal.js';

/** Every asymmetric algorithm D37 accepts; jose checks that the key the `kid` names is of the algorithm's kind. */
export const PROVIDER_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'EdDSA',
  'Ed25519',
];

/** A token with a key id the cached set does not know fetches the set again at most this often. */
export const UNKNOWN_KEY_REFETCH_MS = 30_000;
/** Until discovery and the first key set have succeeded, a new attempt at most this often. */
const FIRST_LOAD_RETRY_MS = 5_000;

const KEYS_UNAVAILABLE = "The identity provider's keys could not be read yet; retry shortly";

export interface ProviderSource {
  /** AUTH_OIDC_ISSUER_URL: the key set's address and the issuer come from its discovery document. */
  readonly oidcIssuerUrl?: string;
  /** AUTH_JWKS_URL with AUTH_JWT_ISSUER. */
  readonly jwksUrl?: string;
  readonly issuer?: string;
  /** How old the cached key set may grow before a request fetches it again in the background. */
  readonly refreshMs: number;
}

export interface ProviderKeysEvents {
  /** The key set changed: tokens verified with a key that left it must be verified again. */
  readonly onKeysChanged: () => void;
  readonly onProblem: (message: string, error: unknown) => void;
}

type RemoteKeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * The provider's keys (D37), fetched and cached by jose; this class decides only when to fetch. jose's own
 * refetching is switched off (infinite age and cool-down) because it would try again on every request while the
 * provider is down. Here: the first load is retried in the background of requests (401 meanwhile, readiness DOWN);
 * a stale set is refreshed behind requests that go on with the cached keys; an unknown `kid` fetches at most once
 * per 30 s, and requests arriving meanwhile wait for that fetch. A failed fetch keeps the cached keys.
 */
export class ProviderKeys {
  private remote: RemoteKeySet | undefined;
  private issuer: string | undefined;
  private firstLoad: Promise<void> | undefined;
  private lastFirstLoadAttemptMs = -Infinity;
  private fetching: Promise<void> | undefined;
  private lastUnknownKeyFetchMs = -Infinity;
  private loadedAtMs = -Infinity;
  /** When a request next starts a refresh of the key set: one comparison per request until then. */
  private nextRefreshAtMs = Infinity;
  private keySetText = '';

  constructor(
    private readonly source: ProviderSource,
    private readonly events: ProviderKeysEvents,
  ) {}

  /** True once the key set was read (readiness): later outages keep the cached keys working. */
  get ready(): boolean {
    return this.loadedAtMs > -Infinity;
  }

  /** Starts discovery and the first load without a request waiting for it. */
  warmUp(): void {
    this.issuerForVerification().catch(() => undefined);
  }

  /** The issuer tokens must name, once the keys are there; a TokenRefused while they cannot be read. */
  async issuerForVerification(): Promise<string | undefined> {
    if (this.ready) return this.issuer;
    if (!this.firstLoad) {
      if (Date.now() < this.lastFirstLoadAttemptMs + FIRST_LOAD_RETRY_MS) throw new TokenRefused(KEYS_UNAVAILABLE);
      this.lastFirstLoadAttemptMs = Date.now();
      this.firstLoad = this.loadFirst().finally(() => (this.firstLoad = undefined));
    }
    try {
      await this.firstLoad;
    } catch {
      throw new TokenRefused(KEYS_UNAVAILABLE);
    }
    return this.issuer;
  }

  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const remote = this.remote!;
    try {
      return await remote(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || !(await this.fetchForUnknownKey())) throw error;
      return remote(header, token);
    }
  };

  private async loadFirst(): Promise<void> {
    try {
      if (!this.remote) {
        const { issuer, jwksUri } = this.source.oidcIssuerUrl
          ? await discover(this.source.oidcIssuerUrl)
          : { issuer: this.source.issuer, jwksUri: this.source.jwksUrl! };
        this.issuer = issuer;
        this.remote = createRemoteJWKSet(new URL(jwksUri), {
          cacheMaxAge: Infinity,
          cooldownDuration: Infinity,
          timeoutDuration: PROVIDER_TIMEOUT_MS,
        });
      }
      await this.fetch();
    } catch (error) {
      this.events.onProblem('the identity provider could not be read; tokens are refused until it can', error);
      throw error;
    }
  }

  private async fetch(): Promise<void> {
    await this.remote!.reload();
    this.loadedAtMs = Date.now();
    this.nextRefreshAtMs = this.loadedAtMs + this.source.refreshMs;
    const keySetText = JSON.stringify(this.remote!.jwks());
    if (this.keySetText !== '' && keySetText !== this.keySetText) this.events.onKeysChanged();
    this.keySetText = keySetText;
  }

  private fetchOnce(): Promise<void> {
    this.fetching ??= this.fetch().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  /** Called on every request, tokens known already included, so a retired key stops working everywhere. */
  refreshWhenStale(nowMs: number): void {
    if (nowMs < this.nextRefreshAtMs || this.fetching) return;
    // A failed refresh is tried again one period later, not on the next request.
    this.nextRefreshAtMs = nowMs + this.source.refreshMs;
    this.fetchOnce().catch((error: unknown) =>
      this.events.onProblem("refreshing the identity provider's keys failed; the cached keys stay in use", error),
    );
  }

  /** True when a fetch ran (or was running) and the lookup is worth repeating. */
  private async fetchForUnknownKey(): Promise<boolean> {
    if (!this.fetching) {
      if (Date.now() < this.lastUnknownKeyFetchMs + UNKNOWN_KEY_REFETCH_MS) return false;
      this.lastUnknownKeyFetchMs = Date.now();
    }
    try {
      await this.fetchOnce();
      return true;
    } catch (error) {
      this.events.onProblem("fetching the identity provider's keys for an unknown key id failed", error);
      return false;
    }
  }
}
