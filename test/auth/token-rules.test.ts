import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestContext } from '../support/app.js';
import { hs256ByHand, nowSeconds, unsignedToken } from '../support/jwt.js';
import { bearer, signToken, TEST_SECRET } from '../support/tokens.js';

const PROTECTED = '/v1/products/index';

async function get(context: TestContext, token: string): Promise<request.Response> {
  return request(context.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
}

function sign(
  key: KeyObject | Uint8Array,
  alg: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return (
    new SignJWT({ sub: 'test-user', exp: nowSeconds() + 300, ...claims })
      .setProtectedHeader({ ...header, alg })
      // jose signs a crit header only for parameters it is told it knows: a token the service must refuse.
      .sign(key, {
        crit: Object.fromEntries(((header.crit as string[] | undefined) ?? []).map((name) => [name, true])),
      })
  );
}

function expectInvalidToken(response: request.Response, description: RegExp): void {
  expect(response.status).toBe(401);
  expect(response.body).toMatchObject({ status: 401, exception: 'InvalidBearerTokenException', path: PROTECTED });
  expect(response.body.message).toMatch(description);
  expect(response.headers['www-authenticate']).toBe(
    `Bearer error="invalid_token", error_description="${response.body.message as string}"`,
  );
}

const secretKey = new TextEncoder().encode(TEST_SECRET);

describe('a crit header the service does not understand (issue 36)', () => {
  const ctx = useTestApp();

  it('is a 401 with the shared secret', async () => {
    const token = await sign(secretKey, 'HS256', {}, { crit: ['urn:example:must-check'], 'urn:example:must-check': 1 });
    expectInvalidToken(await get(ctx, token), /crit/);
  });
});

describe('a sub with hidden characters (issue 36)', () => {
  const ctx = useTestApp();

  for (const [name, sub] of <const>[
    ['NUL', 'alice\u0000'],
    ['a right-to-left override', 'alice\u202eevil'],
    ['a newline', 'alice\nbob'],
    ['a zero-width space', 'ali\u200bce'],
  ]) {
    it(`is a 401 when sub holds ${name}, and nothing is stored with it as actor`, async () => {
      const token = signToken({ sub });
      const response = await request(ctx.app)
        .post('/v1/products')
        .set('Authorization', bearer(token))
        .send([
          {
            sku: `HIDDEN-${name.length}`,
            baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 },
          },
        ]);
      expect(response.status).toBe(401);
      expect(response.body.message).toBe(
        'The bearer token names a subject (sub) with control, invisible or bidirectional characters',
      );
      expect((await ctx.db.pool.query('SELECT 1 FROM product')).rowCount).toBe(0);
    });
  }

  it('accepts a sub in any script', async () => {
    expect((await get(ctx, signToken({ sub: 'Łukasz 山田 😀' }))).status).toBe(200);
  });
});

describe('every signature algorithm with a PEM key of its kind (issue 36)', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const ed25519 = generateKeyPairSync('ed25519');
  const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();
  const cases = [
    { kind: 'RSA', pair: rsa, accepted: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] },
    { kind: 'EC P-256', pair: p256, accepted: ['ES256'] },
    { kind: 'EC P-384', pair: p384, accepted: ['ES384'] },
    { kind: 'Ed25519', pair: ed25519, accepted: ['EdDSA'] },
  ];
  for (const { kind, pair, accepted } of cases) {
    describe(`with an ${kind} key`, () => {
      const ctx = useTestApp({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: pem(pair.publicKey) });

      for (const alg of accepted) {
        it(`accepts ${alg}`, async () => {
          expect((await get(ctx, await sign(pair.privateKey, alg))).status).toBe(200);
        });
      }

      it('refuses a token signed by a key of another kind, naming the algorithm', async () => {
        const other = cases.find((entry) => entry.kind !== kind && !entry.accepted.includes(accepted[0]!))!;
        expectInvalidToken(await get(ctx, await sign(other.pair.privateKey, other.accepted[0]!)), /algorithm/);
      });

      it('refuses HS256 keyed with the public key, and alg none', async () => {
        expectInvalidToken(
          await get(ctx, hs256ByHand({ sub: 'x', exp: nowSeconds() + 60 }, pem(pair.publicKey))),
          /algorithm/,
        );
        expectInvalidToken(await get(ctx, unsignedToken({ sub: 'x', exp: nowSeconds() + 60 })), /algorithm/);
      });

      it('refuses an unknown crit header', async () => {
        const token = await sign(pair.privateKey, accepted[0]!, {}, { crit: ['x-unknown'], 'x-unknown': true });
        expectInvalidToken(await get(ctx, token), /crit/);
      });
    });
  }
});

describe('scopes from other claims (AUTH_SCOPE_CLAIMS, issue 36)', () => {
  const ctx = useTestApp({
    AUTH_SCOPE_CLAIMS: 'roles,realm_access.roles',
    AUTH_REQUIRED_SCOPES_READ: 'inventory.read',
    AUTH_REQUIRED_SCOPES_WRITE: 'inventory.write',
  });

  it("reads Entra's roles", async () => {
    expect((await get(ctx, signToken({ roles: ['inventory.read'] }))).status).toBe(200);
  });

  it("reads Keycloak's realm_access.roles", async () => {
    expect((await get(ctx, signToken({ realm_access: { roles: ['inventory.read'] } }))).status).toBe(200);
  });

  it('no longer reads scope when it is not named', async () => {
    expect((await get(ctx, signToken({ scope: 'inventory.read' }))).status).toBe(403);
  });

  it('answers 403 with WWW-Authenticate insufficient_scope naming the scope, the body as before', async () => {
    const response = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer(signToken({ roles: ['inventory.read'] })))
      .send([]);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", error_description="The bearer token lacks the scope inventory.write", scope="inventory.write"',
    );
    expect(response.body).toEqual({
      message: 'The bearer token lacks the scope inventory.write',
      messageKey: 'owms.common.auth.insufficientScope',
      obj: ['inventory.write'],
      httpStatus: '403',
      class: 'String',
    });
  });
});

describe('RFC 6750 on a 401 without a token', () => {
  const ctx = useTestApp();

  it('says Bearer with no error code', async () => {
    const response = await request(ctx.app).get(PROTECTED);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
  });
});
