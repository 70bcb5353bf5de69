import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';

export interface FixedKey {
  readonly key: KeyObject;
  /** Only the algorithms that fit the key: `alg` chooses none of another kind, `none` and HS* with a public key. */
  readonly algorithms: readonly string[];
}

const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const CURVE_ALGORITHMS: Readonly<Record<string, string>> = { prime256v1: 'ES256', secp384r1: 'ES384' };

/** The algorithms a PEM public key verifies; throws (at start) for a key of no accepted kind. */
export function algorithmsForPublicKey(key: KeyObject): string[] {
  const type = key.asymmetricKeyType;
  if (type === 'rsa' || type === 'rsa-pss') return RSA_ALGORITHMS;
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
    const algorithm = CURVE_ALGORITHMS[curve];
    if (!algorithm) {
      throw new Error(`AUTH_JWT_PUBLIC_KEY: EC keys must be on curve P-256 (ES256) or P-384 (ES384), not ${curve}`);
    }
    return [algorithm];
  }
  // RFC 8037's EdDSA and RFC 9864's fully specified name for the same signature.
  if (type === 'ed25519') return ['EdDSA', 'Ed25519'];
  throw new Error(
    `AUTH_JWT_PUBLIC_KEY: unsupported key type ${type ?? 'unknown'}; use an RSA, EC (P-256, P-384) or Ed25519 key`,
  );
}

/** A key object built once: parsing a PEM or wrapping a secret on every request would cost each one. */
export function publicKeyOf(pem: string): FixedKey {
  const key = createPublicKey(pem);
  return { key, algorithms: algorithmsForPublicKey(key) };
}

export function secretKeyOf(secret: string): FixedKey {
  return { key: createSecretKey(Buffer.from(secret, 'utf8')), algorithms: ['HS256'] };
}
