/** Who sent a request and what they may do: the one answer identity gives the web layer. */
export interface Principal {
  /** The token's `sub`, recorded as the actor of every stock change (D5, D24). */
  readonly subject: string;
  readonly scopes: readonly string[];
  /** When the token stops being accepted (its `exp` plus the clock tolerance), in epoch milliseconds. */
  readonly expiresAtMs: number;
}

/** A token that is not accepted; the message says why and is safe to show (it never quotes the token). */
export class TokenRefused extends Error {
  override readonly name = 'TokenRefused';
}

// Tokens signed a moment in the future by a server with a slightly fast clock are still accepted.
export const CLOCK_TOLERANCE_SECONDS = 30;
