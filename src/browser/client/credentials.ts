/**
 * The page's one credential, and the only place it lives: the access token typed in, kept in this module's memory
 * (never in storage, a cookie or the address). A login (OpenID Connect) would set it here instead of the field.
 */
let token = '';

export function useToken(value: string): void {
  token = value.trim();
}

export function hasToken(): boolean {
  return token !== '';
}

/** The headers every request of the page carries to prove who asks. */
export function authorization(): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}
