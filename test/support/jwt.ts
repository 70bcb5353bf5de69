import { createHmac, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { TEST_SECRET } from './tokens.js';

export interface PemKeyPair {
  readonly publicKey: string;
  readonly privateKey: string;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * Signs exactly the given claims (no defaults added), so a test can leave out `exp` or set it in the past.
 */
export function signClaims(
  claims: Record<string, unknown>,
  key: string = TEST_SECRET,
  algorithm: jwt.Algorithm = 'HS256',
): string {
  return jwt.sign(claims, key, { algorithm, noTimestamp: true });
}

/** Valid claims for a token that expires in five minutes. */
export function freshClaims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { sub: 'test-user', exp: nowSeconds() + 300, ...extra };
}

/** An unsigned token (`alg: none`), built by hand because jsonwebtoken refuses to produce one with a key. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${base64urlJson({ alg: 'none', typ: 'JWT' })}.${base64urlJson(claims)}.`;
}

/**
 * HS256 over an arbitrary key string, built by hand: jsonwebtoken refuses to HMAC-sign with a PEM key, which is
 * exactly what an algorithm-confusion attacker does with a service's public key.
 */
export function hs256ByHand(claims: Record<string, unknown>, key: string): string {
  const signingInput = `${base64urlJson({ alg: 'HS256', typ: 'JWT' })}.${base64urlJson(claims)}`;
  const signature = createHmac('sha256', key).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

export function rsaKeyPair(): PemKeyPair {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

export function ecKeyPair(): PemKeyPair {
  return generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}
