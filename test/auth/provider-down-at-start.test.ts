import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { closedPort } from '../support/ports.js';
import { ERP_CLIENT, INVENTORY_RESOURCE, rsaSigningKey, TestProvider } from '../support/oidc-provider.js';

const environment: Record<string, string | undefined> = {};
let port: number;
let provider: TestProvider | undefined;

beforeAll(async () => {
  port = await closedPort();
  Object.assign(environment, {
    AUTH_JWT_SECRET: '',
    AUTH_OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
    AUTH_JWT_AUDIENCE: INVENTORY_RESOURCE,
  });
});
const ctx = useTestApp(environment);
afterAll(() => provider?.stop());

describe('an identity provider that is down when the service starts (D37)', () => {
  it('answers 401 and readiness DOWN meanwhile, then accepts its tokens once it is up, without a restart', async () => {
    const refused = await request(ctx.app).get('/v1/products/index').set('Authorization', 'Bearer a.b.c');
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe("The identity provider's keys could not be read yet; retry shortly");
    const readiness = await request(ctx.app).get('/actuator/health/readiness');
    expect([readiness.status, readiness.body]).toEqual([503, { status: 'DOWN' }]);

    provider = await TestProvider.start([rsaSigningKey('key-a')], 'key-a', port);
    const token = await provider.clientCredentialsToken(ERP_CLIENT, 'inventory.read');
    // The first load is tried again at most every 5 s, behind requests.
    const deadline = Date.now() + 12_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await request(ctx.app).get('/v1/products/index').set('Authorization', `Bearer ${token}`)).status;
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
    expect((await request(ctx.app).get('/actuator/health/readiness')).body).toEqual({ status: 'UP' });
  }, 20_000);
});
