/** How long a request to the provider (discovery, its key set) may take before it counts as failed. */
export const PROVIDER_TIMEOUT_MS = 5_000;

export interface ProviderDocument {
  readonly issuer: string;
  readonly jwksUri: string;
}

/**
 * OpenID Connect Discovery 1.0: the provider's configuration names its key set. The document must name exactly the
 * configured issuer (section 4.3), or tokens of another tenant of the same provider would be accepted.
 */
export async function discover(issuerUrl: string): Promise<ProviderDocument> {
  const url = `${issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
  });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (document.issuer !== issuerUrl) {
    throw new Error(
      `${url} names the issuer ${JSON.stringify(document.issuer)}, not AUTH_OIDC_ISSUER_URL ${issuerUrl}`,
    );
  }
  if (typeof document.jwks_uri !== 'string' || !/^https?:\/\//.test(document.jwks_uri)) {
    throw new Error(`${url} names no http(s) jwks_uri`);
  }
  return { issuer: issuerUrl, jwksUri: document.jwks_uri };
}
