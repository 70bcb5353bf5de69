import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function configError(environment: Record<string, string>): string {
  try {
    loadConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('the identity settings (D37)', () => {
  it('reads a provider by discovery, the refresh period and the scope claims', () => {
    const { auth } = loadConfig({
      AUTH_OIDC_ISSUER_URL: 'https://login.example/realms/warehouse',
      AUTH_JWKS_REFRESH_SECONDS: '60',
      AUTH_SCOPE_CLAIMS: 'scope, realm_access.roles',
    });
    expect(auth).toMatchObject({
      oidcIssuerUrl: 'https://login.example/realms/warehouse',
      jwksUrl: undefined,
      jwksRefreshSeconds: 60,
      scopeClaims: ['scope', 'realm_access.roles'],
    });
  });

  it('refuses a key set without the issuer whose tokens it signs', () => {
    expect(configError({ AUTH_JWKS_URL: 'https://login.example/keys' })).toBe(
      "Invalid configuration: AUTH_JWT_ISSUER: is required with AUTH_JWKS_URL: the provider's keys sign only its own " +
        "issuer's tokens",
    );
  });

  it('refuses two key sources, naming both', () => {
    expect(
      configError({ AUTH_JWT_SECRET: 'a-secret-of-enough-length', AUTH_OIDC_ISSUER_URL: 'https://login.example' }),
    ).toBe(
      'Invalid configuration: AUTH_OIDC_ISSUER_URL: set only one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY, ' +
        'AUTH_JWKS_URL, AUTH_OIDC_ISSUER_URL, not AUTH_JWT_SECRET and AUTH_OIDC_ISSUER_URL',
    );
  });

  it('refuses an issuer setting beside discovery, and a provider address that is no http(s) URL', () => {
    expect(
      configError({ AUTH_OIDC_ISSUER_URL: 'https://login.example', AUTH_JWT_ISSUER: 'https://login.example' }),
    ).toBe('Invalid configuration: AUTH_JWT_ISSUER: must not be set with AUTH_OIDC_ISSUER_URL, which is the issuer');
    expect(configError({ AUTH_OIDC_ISSUER_URL: 'login.example' })).toBe(
      'Invalid configuration: AUTH_OIDC_ISSUER_URL: must be an http:// or https:// URL',
    );
  });

  it('accepts a provider as the key of production', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      AUTH_JWKS_URL: 'https://login.example/keys',
      AUTH_JWT_ISSUER: 'https://login.example',
      DATABASE_URL: 'postgres://inventory@db/inventory',
    });
    expect(config.auth.jwksUrl).toBe('https://login.example/keys');
  });
});
