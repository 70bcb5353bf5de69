import type { JWTPayload } from 'jose';
import { containsHiddenCharacters } from '../http/key-schema.js';
import { TokenRefused } from './principal.js';

function valueAt(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const name of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
  }
  return value;
}

/**
 * The scopes a token carries, from the claims named in AUTH_SCOPE_CLAIMS (dotted paths): a space-separated string
 * (`scope`) or an array of strings (`scp`, Entra's `roles`, Keycloak's `realm_access.roles`).
 */
export function scopesOf(payload: JWTPayload, claimPaths: readonly string[]): string[] {
  const scopes = new Set<string>();
  for (const path of claimPaths) {
    const raw = valueAt(payload, path);
    const items = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : [];
    for (const item of items) if (typeof item === 'string' && item !== '') scopes.add(item);
  }
  return [...scopes];
}

/**
 * The actor of every change and the owner of Idempotency-Keys: tokens without one would share both, and one with
 * hidden characters would be stored in the ledger looking like someone else (the rule keys follow, plus NUL).
 */
export function subjectOf(payload: JWTPayload): string {
  const subject = payload.sub;
  if (typeof subject !== 'string' || subject.trim() === '') {
    throw new TokenRefused('The bearer token names no subject (sub)');
  }
  if (subject.includes('\u0000') || containsHiddenCharacters(subject)) {
    throw new TokenRefused(
      'The bearer token names a subject (sub) with control, invisible or bidirectional characters',
    );
  }
  return subject;
}
