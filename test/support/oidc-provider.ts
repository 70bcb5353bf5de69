import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** The resource (audience) the provider's access tokens are for. */
export const INVENTORY_RESOURCE = 'urn:inventory-service';
export const ERP_CLIENT = { id: 'erp-connector', secret: 'erp-connector-secret-for-tests-only' };
/** A client allowed to read only. */
export const READER_CLIENT = { id: 'stock-reader', secret: 'stock-reader-secret-for-tests-only' };
/** A client whose tokens carry no scope but Entra-style `roles`. */
export const ROLES_CLIENT = { id: 'warehouse-app', secret: 'warehouse-app-secret-for-tests-only' };
/** The stock browser's public client (Authorization Code with PKCE), configured for the browser login. */
export const BROWSER_CLIENT_ID = 'stock-browser';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly jwk: Record<string, unknown>;
}

export function rsaSigningKey(kid: string): SigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' } };
}

/** Where the stock browser's public client returns, and how long its access tokens last (the browser's login). */
export interface BrowserClientOptions {
  readonly redirectUri: string;
  readonly accessTokenTtlSeconds: number;
}

const DEFAULT_BROWSER: BrowserClientOptions = { redirectUri: 'http://127.0.0.1/browser', accessTokenTtlSeconds: 300 };

function configuration(
  keys: readonly SigningKey[],
  signingKid: string,
  browser: BrowserClientOptions,
): Record<string, unknown> {
  const clientCredentials = (client: { id: string; secret: string }, scope: string) => ({
    client_id: client.id,
    client_secret: client.secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    ...(scope ? { scope } : {}),
  });
  return {
    clients: [
      clientCredentials(ERP_CLIENT, 'inventory.read inventory.write'),
      clientCredentials(READER_CLIENT, 'inventory.read'),
      clientCredentials(ROLES_CLIENT, ''),
      {
        client_id: BROWSER_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [browser.redirectUri],
        post_logout_redirect_uris: [browser.redirectUri],
      },
    ],
    scopes: ['openid', 'offline_access', 'inventory.read', 'inventory.write'],
    jwks: { keys: keys.map((key) => key.jwk) },
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => INVENTORY_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'inventory.read inventory.write',
          audience: INVENTORY_RESOURCE,
          accessTokenTTL: browser.accessTokenTtlSeconds,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256', kid: signingKid } },
        }),
      },
    },
    // As Keycloak does, a client allowed the refresh grant gets a refresh token without asking for offline_access.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) =>
      token.clientId === ROLES_CLIENT.id ? { roles: ['inventory.read'] } : undefined,
  };
}

/**
 * A real OpenID Connect provider (the npm package oidc-provider) on 127.0.0.1, in this process. `rotate` swaps in
 * a provider with another key set and signing key at the same issuer, as a provider's key rotation looks from
 * outside; `stop` closes it (connections included).
 */
export class TestProvider {
  private current: Provider;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    keys: readonly SigningKey[],
    signingKid: string,
    private readonly browser: BrowserClientOptions,
  ) {
    this.current = new Provider(issuer, configuration(keys, signingKid, browser));
  }

  static async start(
    keys: readonly SigningKey[],
    signingKid = keys[0]!.kid,
    port = 0,
    browser = DEFAULT_BROWSER,
  ): Promise<TestProvider> {
    let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
    const server = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const provider = new TestProvider(server, issuer, keys, signingKid, browser);
    handle = (req, res) => void provider.current.callback()(req, res);
    return provider;
  }

  rotate(keys: readonly SigningKey[], signingKid: string): void {
    this.current = new Provider(this.issuer, configuration(keys, signingKid, this.browser));
  }

  /** A client-credentials access token (RFC 6749 section 4.4), as an ERP connector gets one. */
  async clientCredentialsToken(client: { id: string; secret: string }, scope?: string): Promise<string> {
    const response = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
    });
    const body = (await response.json()) as { access_token?: string };
    if (response.status !== 200 || !body.access_token) {
      throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
    }
    return body.access_token;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
