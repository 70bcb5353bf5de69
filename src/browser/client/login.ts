/**
 * Logging in at the company's provider (D37): Authorization Code with PKCE (S256) as a public client, back to this
 * page. The tokens go to ./credentials (memory only). Only the PKCE verifier and the state of the one round trip
 * sit in sessionStorage: the page is left for the provider's login and its memory is gone when it comes back; the
 * verifier is useless without the one-time code, and both are removed as soon as the page is back.
 */
import { forgetTokens, idToken, refreshToken, useTokens } from './credentials.js';

export interface LoginSettings {
  readonly login: 'provider' | 'token';
  readonly issuer?: string;
  readonly clientId?: string;
  readonly scope?: string;
}

interface Provider {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly end_session_endpoint?: string;
}

interface TokenAnswer {
  readonly access_token: string;
  readonly expires_in?: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
}

const ROUND_TRIP = 'stock-browser-login';
// A token is renewed this long before it expires (at most a quarter of its lifetime before).
const RENEW_BEFORE_MS = 60_000;

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function randomText(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

/** Who the ID token names, for the page to show; not checked, it came straight from the token endpoint. */
function nameIn(token: string | undefined): string {
  const payload = token?.split('.')[1];
  if (!payload) return 'you';
  const bytes = Uint8Array.from(atob(payload.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0));
  const claims = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  const name = claims.preferred_username ?? claims.name ?? claims.email ?? claims.sub;
  return typeof name === 'string' ? name : 'you';
}

export class ProviderLogin {
  private renewal: number | undefined;

  private constructor(
    private readonly settings: Required<LoginSettings>,
    private readonly provider: Provider,
    /** Told when the login ends by itself (a refused refresh, a token expired without a refresh token). */
    private readonly ended: (reason: string) => void,
  ) {}

  /** The provider's endpoints from its discovery document. */
  static async discover(settings: Required<LoginSettings>, ended: (reason: string) => void): Promise<ProviderLogin> {
    const response = await fetch(`${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
    if (!response.ok) throw new Error(`the provider's discovery answered ${response.status}`);
    return new ProviderLogin(settings, (await response.json()) as Provider, ended);
  }

  private get redirectUri(): string {
    return window.location.origin + window.location.pathname;
  }

  /** Leaves for the provider's login page. */
  async start(): Promise<void> {
    const verifier = randomText();
    const state = randomText();
    sessionStorage.setItem(ROUND_TRIP, JSON.stringify({ verifier, state }));
    const url = new URL(this.provider.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.settings.clientId,
      redirect_uri: this.redirectUri,
      scope: this.settings.scope,
      state,
      code_challenge: await challengeOf(verifier),
      code_challenge_method: 'S256',
    }).toString();
    window.location.assign(url.href);
  }

  /**
   * Back from the provider: the code is exchanged for tokens and the address loses its query. Answers the logged
   * in user's name, or undefined when the page was not opened by the provider.
   */
  async finish(): Promise<string | undefined> {
    const answer = new URLSearchParams(window.location.search);
    if (!answer.has('state')) return undefined;
    const saved = sessionStorage.getItem(ROUND_TRIP);
    sessionStorage.removeItem(ROUND_TRIP);
    window.history.replaceState(null, '', this.redirectUri);
    const trip = saved ? (JSON.parse(saved) as { verifier: string; state: string }) : undefined;
    if (answer.has('error')) throw new Error(answer.get('error_description') ?? answer.get('error') ?? 'refused');
    if (!trip || trip.state !== answer.get('state')) throw new Error('the answer is not for this tab’s login');
    await this.token({
      grant_type: 'authorization_code',
      code: answer.get('code') ?? '',
      redirect_uri: this.redirectUri,
      code_verifier: trip.verifier,
    });
    return nameIn(idToken());
  }

  private async token(grant: Record<string, string>): Promise<void> {
    const response = await fetch(this.provider.token_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...grant, client_id: this.settings.clientId }),
    });
    const body = (await response.json().catch(() => ({}))) as Partial<TokenAnswer> & { error?: string };
    if (!response.ok || !body.access_token) throw new Error(`the provider refused: ${body.error ?? response.status}`);
    useTokens({ accessToken: body.access_token, refreshToken: body.refresh_token, idToken: body.id_token });
    this.renewIn((body.expires_in ?? 300) * 1000);
  }

  /** With a refresh token, a new access token before this one expires; without, the login ends when it does. */
  private renewIn(lifetimeMs: number): void {
    window.clearTimeout(this.renewal);
    if (!refreshToken()) {
      this.renewal = window.setTimeout(() => this.end('Your login expired: log in again.'), lifetimeMs);
      return;
    }
    const delay = lifetimeMs - Math.min(RENEW_BEFORE_MS, lifetimeMs / 4);
    this.renewal = window.setTimeout(() => {
      this.token({ grant_type: 'refresh_token', refresh_token: refreshToken() ?? '' }).catch((error: unknown) =>
        this.end(`Your login ended (${(error as Error).message}): log in again.`),
      );
    }, delay);
  }

  private end(reason: string): void {
    forgetTokens();
    this.ended(reason);
  }

  /** Forgets the tokens, and ends the provider's session too when it offers an end-session endpoint. */
  logout(): void {
    window.clearTimeout(this.renewal);
    const hint = idToken();
    forgetTokens();
    if (!this.provider.end_session_endpoint) return this.ended('Logged out.');
    const url = new URL(this.provider.end_session_endpoint);
    url.searchParams.set('client_id', this.settings.clientId);
    url.searchParams.set('post_logout_redirect_uri', this.redirectUri);
    if (hint) url.searchParams.set('id_token_hint', hint);
    window.location.assign(url.href);
  }
}
