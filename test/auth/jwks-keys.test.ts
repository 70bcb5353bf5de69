import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { hs256ByHand, nowSeconds, unsignedToken } from '../support/jwt.js';

const ISSUER = 'https://login.example/tenant';
const PROTECTED = '/v1/products/index';

interface Key {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly algorithms: readonly string[];
}

function key(kid: string, pair: { privateKey: KeyObject; publicKey: KeyObject }, algorithms: string[]): Key {
  return { kid, ...pair, algorithms };
}

const KEYS: readonly Key[] = [
  key('rsa', generateKeyPairSync('rsa', { modulusLength: 2048 }), [
    'RS256',
    'RS384',
    'RS512',
    'PS256',
    'PS384',
    'PS512',
  ]),
  key('p256', generateKeyPairSync('ec', { namedCurve: 'P-256' }), ['ES256']),
  key('p384', generateKeyPairSync('ec', { namedCurve: 'P-384' }), ['ES384']),
  key('ed25519', generateKeyPairSync('ed25519'), ['EdDSA']),
];

/** A key set served as a provider serves it, counting how often it is fetched. */
let fetches = 0;
let server: Server;
const environment: Record<string, string | undefined> = {};

beforeAll(async () => {
  server = createServer((_req, res) => {
    fetches += 1;
    const keys = KEYS.map((entry) => ({ ...entry.publicKey.export({ format: 'jwk' }), kid: entry.kid, use: 'sig' }));
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(environment, {
    AUTH_JWT_SECRET: '',
    AUTH_JWKS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys`,
    AUTH_JWT_ISSUER: ISSUER,
  });
});
const ctx = useTestApp(environment);
afterAll(() => new Promise((resolve) => server.close(resolve)));

function sign(privateKey: KeyObject, alg: string, kid: string, subject = 'erp'): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg, kid })
    .setIssuer(ISSUER)
    .setSubject(subject)
    .setExpirationTime(nowSeconds() + 300)
    .sign(privateKey);
}

async function get(token: string): Promise<request.Response> {
  return request(ctx.app).get(PROTECTED).set('Authorization', `Bearer ${token}`);
}

describe('a key set at AUTH_JWKS_URL (D37)', () => {
  for (const entry of KEYS) {
    for (const alg of entry.algorithms) {
      it(`accepts ${alg} with the ${entry.kid} key, and refuses it when kid names a key of another kind`, async () => {
        expect((await get(await sign(entry.privateKey, alg, entry.kid))).status).toBe(200);
        const other = KEYS.find((candidate) => candidate !== entry && !candidate.algorithms.includes(alg))!;
        const response = await get(await sign(entry.privateKey, alg, other.kid));
        expect(response.status).toBe(401);
        expect(response.body.message).toBe(
          "No key of the identity provider fits the bearer token's key id (kid) and algorithm",
        );
      });
    }
  }

  it('refuses HS256 keyed with a public key of the set, and alg none', async () => {
    const claims = { sub: 'erp', iss: ISSUER, exp: nowSeconds() + 300 };
    const pem = KEYS[0]!.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    for (const token of [hs256ByHand(claims, pem), unsignedToken(claims)]) {
      const response = await get(token);
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('The bearer token is signed with an algorithm that is not accepted');
    }
  });

  it('fetches the set again at most once per 30 s for unknown key ids, and answers each 401', async () => {
    await get(await sign(KEYS[0]!.privateKey, 'RS256', 'rsa'));
    const before = fetches;
    const statuses = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      statuses.push((await get(await sign(KEYS[0]!.privateKey, 'RS256', `unknown-${attempt}`))).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    // The wrong-kind cases above may have used this window already.
    expect(fetches - before).toBeLessThanOrEqual(1);
  });
});
