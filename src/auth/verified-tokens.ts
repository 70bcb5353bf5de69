import type { Principal } from './principal.js';

/**
 * Tokens that passed verification, until they expire. A client sends the same token with every request, and
 * checking it again (a signature and two JSON parses) was a twentieth of a simple read's CPU time. Keyed by the
 * whole token, signature included; only successes are kept, the expiry is checked on every use, and the oldest
 * entry makes room when the cache is full. Emptied when the provider's key set changes, so a token of a retired
 * key is not accepted from memory.
 */
export class VerifiedTokens {
  private static readonly CAPACITY = 10_000;
  private readonly entries = new Map<string, Principal>();

  get(token: string, nowMs: number): Principal | undefined {
    const principal = this.entries.get(token);
    if (!principal) return undefined;
    // Expired from (exp + tolerance) on; the caller then verifies and says why.
    if (nowMs < principal.expiresAtMs) return principal;
    this.entries.delete(token);
    return undefined;
  }

  add(token: string, principal: Principal): void {
    if (this.entries.size >= VerifiedTokens.CAPACITY) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, principal);
  }

  clear(): void {
    this.entries.clear();
  }
}
