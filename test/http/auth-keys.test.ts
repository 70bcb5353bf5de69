import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { publicKeyOf } from '../../src/auth/fixed-keys.js';
import type { TestContext } from '../support/app.js';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined } from '../support/http.js';
import { ecKeyPair, freshClaims, hs256ByHand, rsaKeyPair, signClaims, unsignedToken } from '../support/jwt.js';
import { TEST_SECRET } from '../support/tokens.js';

const PROTECTED = '/v1/products/index';

// Generated per run: the service must verify with whatever PEM key it is given, not a fixture.
const rsa = rsaKeyPair();
const ec = ecKeyPair();

async function get(context: TestContext, token: string): Promise<request.Response> {
  return request(context.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
}

function expectInvalidToken(response: request.Response, reason: RegExp, token: string): void {
  expectServerDeclined(response, {
    status: 401,
    error: 'Unauthorized',
    exception: 'InvalidBearerTokenException',
    message: reason,
    path: PROTECTED,
  });
  expect(response.headers['www-authenticate']).toBe(
    `Bearer error="invalid_token", error_description="${response.body.message as string}"`,
  );
  expect(response.text).not.toContain(token);
}

describe('with an RSA public key (AUTH_JWT_PUBLIC_KEY)', () => {
  const ctx = useTestApp({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: rsa.publicKey });

  it('accepts an RS256 token signed with the matching private key', async () => {
    const response = await get(ctx, signClaims(freshClaims(), rsa.privateKey, 'RS256'));
    expect(response.status).toBe(200);
  });

  it('refuses an RS256 token signed with another private key, naming the signature', async () => {
    const token = signClaims(freshClaims(), rsaKeyPair().privateKey, 'RS256');
    expectInvalidToken(await get(ctx, token), /signature/i, token);
  });

  it('refuses an HS256 token whose HMAC key is the service public key (algorithm confusion)', async () => {
    const token = hs256ByHand(freshClaims(), rsa.publicKey);
    expectInvalidToken(await get(ctx, token), /algorithm/i, token);
  });

  it('refuses an HS256 token signed with a shared secret', async () => {
    const token = signClaims(freshClaims(), TEST_SECRET, 'HS256');
    expectInvalidToken(await get(ctx, token), /algorithm/i, token);
  });

  it('accepts an RS384 token signed with the matching private key (issue 36: every RSA algorithm fits)', async () => {
    const response = await get(ctx, signClaims(freshClaims(), rsa.privateKey, 'RS384'));
    expect(response.status).toBe(200);
  });

  it('refuses an unsigned token (alg: none)', async () => {
    const token = unsignedToken(freshClaims());
    expectInvalidToken(await get(ctx, token), /algorithm|signature/i, token);
  });

  it('refuses an RS256 token without exp', async () => {
    const token = signClaims({ sub: 'test-user' }, rsa.privateKey, 'RS256');
    expectInvalidToken(await get(ctx, token), /\bexp\b|expiry/i, token);
  });
});

describe('with an RSA public key whose line breaks arrive escaped as \\n', () => {
  const ctx = useTestApp({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: rsa.publicKey.trim().replace(/\n/g, '\\n') });

  it('accepts an RS256 token signed with the matching private key', async () => {
    const response = await get(ctx, signClaims(freshClaims(), rsa.privateKey, 'RS256'));
    expect(response.status).toBe(200);
  });
});

describe('with an EC P-256 public key (AUTH_JWT_PUBLIC_KEY)', () => {
  const ctx = useTestApp({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: ec.publicKey });

  it('accepts an ES256 token signed with the matching private key', async () => {
    const response = await get(ctx, signClaims(freshClaims(), ec.privateKey, 'ES256'));
    expect(response.status).toBe(200);
  });

  it('refuses an ES256 token signed with another private key, naming the signature', async () => {
    const token = signClaims(freshClaims(), ecKeyPair().privateKey, 'ES256');
    expectInvalidToken(await get(ctx, token), /signature/i, token);
  });

  it('refuses an RS256 token (another algorithm than the configured one)', async () => {
    const token = signClaims(freshClaims(), rsa.privateKey, 'RS256');
    expectInvalidToken(await get(ctx, token), /algorithm/i, token);
  });

  it('refuses an HS256 token whose HMAC key is the service public key (algorithm confusion)', async () => {
    const token = hs256ByHand(freshClaims(), ec.publicKey);
    expectInvalidToken(await get(ctx, token), /algorithm/i, token);
  });
});

describe('a public key of no accepted kind', () => {
  it('is refused at start instead of refusing every token later: an EC key on curve P-521', () => {
    const { publicKey } = generateKeyPairSync('ec', {
      namedCurve: 'P-521',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    expect(() => publicKeyOf(publicKey)).toThrow(
      'AUTH_JWT_PUBLIC_KEY: EC keys must be on curve P-256 (ES256) or P-384 (ES384), not secp521r1',
    );
  });

  it('is refused at start: an X25519 key (for key agreement, not signatures)', () => {
    const { publicKey } = generateKeyPairSync('x25519', {
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    expect(() => publicKeyOf(publicKey)).toThrow(/AUTH_JWT_PUBLIC_KEY: unsupported key type x25519/);
  });
});
