import pino from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError } from '../../src/config.js';
import { testConfig, useTestApp } from '../support/app.js';

// Nothing listens on port 9 of the loopback: the provider is never reached, and need not be for these answers.
const ISSUER = 'http://127.0.0.1:9/realms/warehouse';
const ctx = useTestApp();
let withProvider: ReturnType<typeof createApp>;

beforeAll(() => {
  const config = testConfig({
    AUTH_JWT_SECRET: '',
    AUTH_OIDC_ISSUER_URL: ISSUER,
    BROWSER_OIDC_CLIENT_ID: 'stock-browser',
  });
  withProvider = createApp({ config, pool: ctx.db.pool, logger: pino({ level: 'silent' }), events: ctx.events });
});

describe("how the stock browser logs in (D37's browser login)", () => {
  it('tells the page to ask for a token when no provider login is configured, and keeps its policy', async () => {
    const settings = await request(ctx.app).get('/browser/login').set('Host', '127.0.0.1');
    expect([settings.status, settings.body]).toEqual([200, { login: 'token' }]);
    const page = await request(ctx.app).get('/browser').set('Host', '127.0.0.1');
    expect(page.headers['content-security-policy']).not.toContain('connect-src');
  });

  it("names the provider's issuer, the public client and the default scopes, and lets the page reach the issuer", async () => {
    const settings = await request(withProvider).get('/browser/login').set('Host', '127.0.0.1');
    expect([settings.status, settings.body]).toEqual([
      200,
      { login: 'provider', issuer: ISSUER, clientId: 'stock-browser', scope: 'openid offline_access' },
    ]);
    const page = await request(withProvider).get('/browser').set('Host', '127.0.0.1');
    expect(page.headers['content-security-policy']).toContain("; connect-src 'self' http://127.0.0.1:9");
  });

  it('refuses BROWSER_OIDC_CLIENT_ID without AUTH_OIDC_ISSUER_URL, naming both', () => {
    expect(() => testConfig({ BROWSER_OIDC_CLIENT_ID: 'stock-browser' })).toThrow(ConfigError);
    expect(() => testConfig({ BROWSER_OIDC_CLIENT_ID: 'stock-browser' })).toThrow(
      /BROWSER_OIDC_CLIENT_ID: needs AUTH_OIDC_ISSUER_URL/,
    );
  });
});
