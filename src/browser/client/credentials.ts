/**
 * The page's credentials, and the only place they live: the access token typed in, or the tokens of a provider
 * login (D37), kept in this module's memory (never in storage, a cookie or the address). A reload forgets them.
 */
export interface Tokens {
  readonly accessToken: string;
  readonly refreshToken?: string;
  readonly idToken?: string;
}

let tokens: Tokens = { accessToken: '' };

export function useToken(value: string): void {
  tokens = { accessToken: value.trim() };
}

/** A provider's answer replaces the tokens; a refresh that brings no new refresh or ID token keeps the old ones. */
export function useTokens(answer: Tokens): void {
  tokens = {
    accessToken: answer.accessToken,
    refreshToken: answer.refreshToken ?? tokens.refreshToken,
    idToken: answer.idToken ?? tokens.idToken,
  };
}

export function hasToken(): boolean {
  return tokens.accessToken !== '';
}

export function refreshToken(): string | undefined {
  return tokens.refreshToken;
}

export function idToken(): string | undefined {
  return tokens.idToken;
}

export function forgetTokens(): void {
  tokens = { accessToken: '' };
}

/** The headers every request of the page carries to prove who asks. */
export function authorization(): Record<string, string> {
  return { Authorization: `Bearer ${tokens.accessToken}` };
}
