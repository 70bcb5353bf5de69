import type { z } from 'zod';
import { productionSecretProblem } from './example-secrets.js';

export interface AuthEnvironment {
  readonly NODE_ENV: string;
  readonly AUTH_JWT_SECRET?: string;
  readonly AUTH_JWT_PUBLIC_KEY?: string;
  readonly AUTH_JWKS_URL?: string;
  readonly AUTH_OIDC_ISSUER_URL?: string;
  readonly AUTH_JWT_ISSUER?: string;
}

const KEY_SETTINGS = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL', 'AUTH_OIDC_ISSUER_URL'] as const;

/** D37: one key source; a provider's key set names its issuer; production refuses guessable or published secrets. */
export function checkAuthSettings(env: AuthEnvironment, ctx: z.RefinementCtx): void {
  const configured = KEY_SETTINGS.filter((name) => env[name] !== undefined);
  if (configured.length > 1) {
    ctx.addIssue({
      code: 'custom',
      path: [configured[1]!],
      message: `set only one of ${KEY_SETTINGS.join(', ')}, not ${configured.join(' and ')}`,
    });
  }
  if (env.AUTH_JWKS_URL && !env.AUTH_JWT_ISSUER) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_ISSUER'],
      message: "is required with AUTH_JWKS_URL: the provider's keys sign only its own issuer's tokens",
    });
  }
  if (env.AUTH_OIDC_ISSUER_URL && env.AUTH_JWT_ISSUER) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_ISSUER'],
      message: 'must not be set with AUTH_OIDC_ISSUER_URL, which is the issuer',
    });
  }
  if (env.NODE_ENV !== 'production') return;
  if (configured.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: 'is required in production (or AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL or AUTH_OIDC_ISSUER_URL)',
    });
  }
  const problem = env.AUTH_JWT_SECRET && productionSecretProblem(env.AUTH_JWT_SECRET);
  if (problem) ctx.addIssue({ code: 'custom', path: ['AUTH_JWT_SECRET'], message: problem });
}
