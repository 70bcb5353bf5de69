import { SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { nowSeconds } from '../support/jwt.js';
import {
  ERP_CLIENT,
  INVENTORY_RESOURCE,
  READER_CLIENT,
  ROLES_CLIENT,
  rsaSigningKey,
  TestProvider,
  type SigningKey,
} from '../support/oidc-provider.js';

const PROTECTED = '/v1/products/index';
const keyA = rsaSigningKey('key-a');
const keyB = rsaSigningKey('key-b');

/** Filled in before the app starts: the app reads it when its own beforeAll runs. */
const environment: Record<string, string | undefined> = {};
let provider: TestProvider;

beforeAll(async () => {
  provider = await TestProvider.start([keyA]);
  Object.assign(environment, {
    AUTH_JWT_SECRET: '',
    AUTH_OIDC_ISSUER_URL: provider.issuer,
    AUTH_JWT_AUDIENCE: INVENTORY_RESOURCE,
    AUTH_SCOPE_CLAIMS: 'scope,roles',
    AUTH_REQUIRED_SCOPES_READ: 'inventory.read',
    AUTH_REQUIRED_SCOPES_WRITE: 'inventory.write',
    // Refreshed behind requests once a second, so a key's retirement shows within the test.
    AUTH_JWKS_REFRESH_SECONDS: '1',
  });
});
const ctx = useTestApp(environment);
afterAll(() => provider.stop());

async function get(token: string): Promise<request.Response> {
  return request(ctx.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
}

/** A token as the provider would sign it, for while the provider is stopped. */
function signedLike(key: SigningKey, subject: string): Promise<string> {
  return new SignJWT({ scope: 'inventory.read', client_id: subject })
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: key.kid })
    .setIssuer(provider.issuer)
    .setAudience(INVENTORY_RESOURCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(nowSeconds() + 300)
    .sign(key.privateKey);
}

async function statusWithin(token: string, expected: number, ms: number): Promise<request.Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await get(token);
    if (response.status === expected || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('an OpenID Connect provider found by discovery (AUTH_OIDC_ISSUER_URL, D37)', () => {
  it('accepts a client-credentials token of the provider and reports ready', async () => {
    const token = await provider.clientCredentialsToken(ERP_CLIENT, 'inventory.read inventory.write');
    expect((await get(token)).status).toBe(200);
    expect((await request(ctx.app).get('/actuator/health/readiness')).body).toEqual({ status: 'UP' });
  });

  it("reads the provider's roles claim as scopes", async () => {
    const token = await provider.clientCredentialsToken(ROLES_CLIENT);
    expect((await get(token)).status).toBe(200);
  });

  it('answers a write with a read-only token 403 insufficient_scope', async () => {
    const token = await provider.clientCredentialsToken(READER_CLIENT, 'inventory.read');
    const response = await request(ctx.app).post('/v1/products').set('Authorization', `Bearer ${token}`).send([]);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", error_description="The bearer token lacks the scope inventory.write", ' +
        'scope="inventory.write"',
    );
    expect(response.body).toEqual({
      message: 'The bearer token lacks the scope inventory.write',
      messageKey: 'owms.common.auth.insufficientScope',
      obj: ['inventory.write'],
      httpStatus: '403',
      class: 'String',
    });
  });

  it('refuses a token of another issuer signed with the same key', async () => {
    const token = await new SignJWT({ scope: 'inventory.read' })
      .setProtectedHeader({ alg: 'RS256', kid: keyA.kid })
      .setIssuer('http://127.0.0.1:1/other')
      .setAudience(INVENTORY_RESOURCE)
      .setSubject('intruder')
      .setExpirationTime(nowSeconds() + 300)
      .sign(keyA.privateKey);
    const response = await get(token);
    expect(response.status).toBe(401);
    expect(response.body.message).toBe('The bearer token is from another issuer');
  });

  it('fails none of 200 requests while the provider rotates its signing key', async () => {
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch += 1) {
      // Halfway, the provider publishes key B beside key A and signs with B from then on.
      if (batch === 10) provider.rotate([keyA, keyB], keyB.kid);
      const token = await provider.clientCredentialsToken(ERP_CLIENT, 'inventory.read');
      const responses = await Promise.all(Array.from({ length: 10 }, () => get(token)));
      statuses.push(...responses.map((response) => response.status));
    }
    expect(statuses).toEqual(Array.from({ length: 200 }, () => 200));
  });

  it('refuses a token of the retired key once the key has left the key set, though it was accepted before', async () => {
    const retired = await signedLike(keyA, 'erp-connector');
    expect((await get(retired)).status).toBe(200);
    provider.rotate([keyB], keyB.kid);
    const response = await statusWithin(retired, 401, 5_000);
    expect(response.status).toBe(401);
    expect(response.body.message).toBe(
      "No key of the identity provider fits the bearer token's key id (kid) and algorithm",
    );
    expect(response.headers['www-authenticate']).toBe(
      `Bearer error="invalid_token", error_description="No key of the identity provider fits the bearer token's key id (kid) and algorithm"`,
    );
    expect((await get(await provider.clientCredentialsToken(ERP_CLIENT, 'inventory.read'))).status).toBe(200);
  });

  it('keeps accepting tokens of the cached keys with the provider stopped, and answers 401 for an unknown kid', async () => {
    await provider.stop();
    expect((await get(await signedLike(keyB, 'erp-during-outage'))).status).toBe(200);
    const unknownKey = rsaSigningKey('key-c');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await get(await signedLike(unknownKey, `erp-unknown-${attempt}`));
      expect(response.status).toBe(401);
      expect(response.body.exception).toBe('InvalidBearerTokenException');
    }
    // Refreshes behind requests fail meanwhile; the cached keys stay.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await get(await signedLike(keyB, 'erp-after-refresh'))).status).toBe(200);
    expect((await request(ctx.app).get('/actuator/health/readiness')).body).toEqual({ status: 'UP' });
  });
});
