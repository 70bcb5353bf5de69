import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined, HAL_JSON_UTF8 } from '../support/http.js';
import { freshClaims, hs256ByHand, nowSeconds, rsaKeyPair, signClaims, unsignedToken } from '../support/jwt.js';
import { bearer, signToken, TEST_SECRET } from '../support/tokens.js';

const ctx = useTestApp();
const PROTECTED = '/v1/products/index';

/** D5: every refused token is a 401 naming the reason, never echoing the token. */
async function expectInvalidToken(token: string, reason: RegExp, path = PROTECTED): Promise<void> {
  const response = await request(ctx.app).get(path).set('Authorization', `Bearer ${token}`);
  expectServerDeclined(response, {
    status: 401,
    error: 'Unauthorized',
    exception: 'InvalidBearerTokenException',
    message: reason,
    path,
  });
  expect(response.headers['www-authenticate']).toBe(
    `Bearer error="invalid_token", error_description="${response.body.message as string}"`,
  );
  expect(response.text).not.toContain(token);
  for (const part of token.split('.').filter((segment) => segment.length > 8)) {
    expect(response.text).not.toContain(part);
  }
}

async function expectAccepted(token: string): Promise<void> {
  const response = await request(ctx.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
}

describe('a request without a token', () => {
  it('is refused with 401 in the server-declined format and WWW-Authenticate: Bearer', async () => {
    const response = await request(ctx.app).get(`${PROTECTED}?page=1`);
    expectServerDeclined(response, {
      status: 401,
      error: 'Unauthorized',
      exception: 'AuthenticationCredentialsNotFoundException',
      message: /authentication is required/i,
      path: PROTECTED,
    });
    expect(response.headers['www-authenticate']).toBe('Bearer');
  });

  it('is refused with 401 even when a valid token is passed as ?access_token= in the query string', async () => {
    const response = await request(ctx.app).get(`${PROTECTED}?access_token=${signToken()}`);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.body).toMatchObject({ exception: 'AuthenticationCredentialsNotFoundException', path: PROTECTED });
  });

  it('is refused with 401 (not 404) on an unknown protected path', async () => {
    const response = await request(ctx.app).get('/v1/no-such-resource/42');
    expectServerDeclined(response, {
      status: 401,
      error: 'Unauthorized',
      exception: 'AuthenticationCredentialsNotFoundException',
      message: /authentication is required/i,
      path: '/v1/no-such-resource/42',
    });
  });

  it('is refused with 401 for a write to the public /index path, which is public only for GET', async () => {
    const response = await request(ctx.app).post('/index');
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
  });

  it.each(['/index', '/actuator/health', '/v3/api-docs', '/swagger-ui'])(
    'is served on the public path %s',
    async (path) => {
      const response = await request(ctx.app).get(path);
      expect(response.status).toBe(200);
      expect(response.headers['www-authenticate']).toBeUndefined();
    },
  );
});

describe('a refused token', () => {
  it('is a 401 naming a malformed token', async () => {
    await expectInvalidToken('not-a-jwt-at-all', /malformed/i);
    await expectInvalidToken('aGVsbG8.d29ybGQ.c2lnbmF0dXJl', /malformed/i);
  });

  it('is a 401 naming an expired token once the clock tolerance has passed', async () => {
    await expectInvalidToken(signClaims(freshClaims({ exp: nowSeconds() - 120 })), /expired/i);
  });

  it('is a 401 naming a token that is not valid yet (nbf beyond the 30 s tolerance)', async () => {
    await expectInvalidToken(signClaims(freshClaims({ nbf: nowSeconds() + 120 })), /not valid yet/i);
  });

  it('is a 401 naming a bad signature when signed with another secret', async () => {
    const token = signClaims(freshClaims(), 'another-secret-that-is-long-enough-42');
    await expectInvalidToken(token, /signature/i);
  });

  it('is a 401 naming a bad signature when the payload was altered after signing', async () => {
    const [header, , signature] = signToken().split('.');
    const forged = Buffer.from(JSON.stringify(freshClaims({ sub: 'admin' }))).toString('base64url');
    await expectInvalidToken(`${header}.${forged}.${signature}`, /signature/i);
  });

  it('is a 401 for an unsigned token (alg: none)', async () => {
    await expectInvalidToken(unsignedToken(freshClaims()), /algorithm|signature/i);
  });

  it('is a 401 for an RS256 token when the service is configured with an HS256 secret', async () => {
    const token = signClaims(freshClaims(), rsaKeyPair().privateKey, 'RS256');
    await expectInvalidToken(token, /algorithm/i);
  });

  it('is a 401 for an HS384 token signed with the right secret (only the configured algorithm counts)', async () => {
    await expectInvalidToken(signClaims(freshClaims(), TEST_SECRET, 'HS384'), /algorithm/i);
  });

  it('is a 401 naming the missing expiry when the token has no exp', async () => {
    await expectInvalidToken(signClaims({ sub: 'test-user' }), /\bexp\b|expiry/i);
    await expectInvalidToken(hs256ByHand({ sub: 'test-user' }, TEST_SECRET), /\bexp\b|expiry/i);
  });

  it.each([
    ['no sub', {}],
    ['an empty sub', { sub: '' }],
    ['a blank sub', { sub: '   ' }],
    ['a numeric sub', { sub: 42 }],
  ])('is a 401 naming the missing subject for a token with %s (issue 15)', async (_case, subject) => {
    const { sub: _dropped, ...withoutSubject } = freshClaims();
    await expectInvalidToken(signClaims({ ...withoutSubject, ...subject }), /names no subject \(sub\)/);
  });

  it('is a 401 naming iat when the token was issued beyond the 30 s tolerance in the future (issue 15)', async () => {
    await expectInvalidToken(
      hs256ByHand(freshClaims({ iat: nowSeconds() + 120 }), TEST_SECRET),
      /issued in the future \(iat\)/,
    );
  });

  it('is a 401 for a token whose iat is not a number', async () => {
    await expectInvalidToken(hs256ByHand(freshClaims({ iat: 'yesterday' }), TEST_SECRET), /malformed/);
  });

  it('is a 401 when the Authorization header uses another scheme', async () => {
    const response = await request(ctx.app)
      .get(PROTECTED)
      .set('Authorization', `Basic ${Buffer.from('user:pass').toString('base64')}`);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect(response.body).toMatchObject({ status: 401, path: PROTECTED, message: expect.stringMatching(/bearer/i) });
  });
});

describe('a valid token', () => {
  it('is accepted when it expired less than the clock tolerance ago', async () => {
    await expectAccepted(signClaims(freshClaims({ exp: nowSeconds() - 10 })));
  });

  it('is accepted when its nbf lies less than the clock tolerance in the future', async () => {
    await expectAccepted(signClaims(freshClaims({ nbf: nowSeconds() + 10 })));
  });

  it('is accepted when its iat lies less than the clock tolerance in the future', async () => {
    await expectAccepted(hs256ByHand(freshClaims({ iat: nowSeconds() + 10 }), TEST_SECRET));
  });

  it('is accepted with an expiry far away when no maximum lifetime is configured', async () => {
    await expectAccepted(signClaims(freshClaims({ exp: 1e11 })));
  });

  it('is accepted whatever the case of the Bearer scheme', async () => {
    const response = await request(ctx.app).get(PROTECTED).set('Authorization', `bearer ${signToken()}`);
    expect(response.status).toBe(200);
  });

  it('reaches routing: an unknown path is 404', async () => {
    const response = await request(ctx.app).get('/v1/no-such-resource/42').set('Authorization', bearer());
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ exception: 'NoHandlerFoundException' });
  });

  it('reaches routing: a wrong method is 405', async () => {
    const response = await request(ctx.app).post('/index').set('Authorization', bearer());
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});

describe('with AUTH_MAX_TOKEN_LIFETIME_SECONDS configured (issue 15)', () => {
  const boundedCtx = useTestApp({ AUTH_MAX_TOKEN_LIFETIME_SECONDS: '3600' });

  async function statusOf(claims: Record<string, unknown>): Promise<{ status: number; message?: string }> {
    // By hand: jsonwebtoken's sign would replace the iat these tests set.
    const token = hs256ByHand(freshClaims(claims), TEST_SECRET);
    const response = await request(boundedCtx.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
    return { status: response.status, message: (response.body as { message?: string }).message };
  }

  it('accepts a token that lives at most that long, from its iat or, without one, from now', async () => {
    expect(await statusOf({ iat: nowSeconds(), exp: nowSeconds() + 3600 })).toMatchObject({ status: 200 });
    expect(await statusOf({ exp: nowSeconds() + 3500 })).toMatchObject({ status: 200 });
  });

  it('refuses a token that lives longer, naming the limit', async () => {
    const refused = { status: 401, message: 'The bearer token lives longer than the 3600 s allowed' };
    expect(await statusOf({ iat: nowSeconds(), exp: nowSeconds() + 7200 })).toEqual(refused);
    expect(await statusOf({ exp: 1e20 })).toEqual(refused);
  });
});

describe('with AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE configured', () => {
  const issuerCtx = useTestApp({ AUTH_JWT_ISSUER: 'https://idp.example/realm', AUTH_JWT_AUDIENCE: 'inventory' });
  const good = { iss: 'https://idp.example/realm', aud: 'inventory' };

  async function expectRefused(claims: Record<string, unknown>, reason: RegExp): Promise<void> {
    const token = signClaims(freshClaims(claims));
    const response = await request(issuerCtx.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
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

  it('accepts a token from that issuer for that audience', async () => {
    const response = await request(issuerCtx.app)
      .get(PROTECTED)
      .set('Authorization', `Bearer ${signClaims(freshClaims(good))}`);
    expect(response.status).toBe(200);
  });

  it('refuses a token from another issuer, naming the issuer', async () => {
    await expectRefused({ ...good, iss: 'https://evil.example' }, /issuer/i);
  });

  it('refuses a token without an issuer, naming the issuer', async () => {
    await expectRefused({ aud: 'inventory' }, /issuer/i);
  });

  it('refuses a token for another audience, naming the audience', async () => {
    await expectRefused({ ...good, aud: 'billing' }, /audience/i);
  });

  it('refuses a token without an audience, naming the audience', async () => {
    await expectRefused({ iss: good.iss }, /audience/i);
  });
});

describe('a token accepted before', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is refused as expired once its expiry and the clock tolerance have passed', async () => {
    const token = signClaims(freshClaims({ exp: nowSeconds() + 60 }));
    await expectAccepted(token);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 91_000 });
    await expectInvalidToken(token, /expired/i);
  });

  it('does not let a copy with an altered signature through', async () => {
    const token = signToken();
    await expectAccepted(token);
    const [header, payload, signature] = token.split('.');
    const altered = `${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
    await expectInvalidToken(altered, /signature/i);
  });
});
