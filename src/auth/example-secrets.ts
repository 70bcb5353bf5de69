/**
 * Secrets printed in this repository's examples, with where: they are public, so a production service signing
 * with one would accept tokens anyone can make. test/auth/production-secret.test.ts keeps this list complete.
 */
export const EXAMPLE_SECRETS: ReadonlyMap<string, string> = new Map([
  ['change-me-to-a-long-random-secret', 'deploy/kubernetes/secret.yaml'],
  ['change-me-please-0123', 'README.md'],
]);

/** Long enough that guessing is hopeless; what `openssl rand -base64 48` gives easily exceeds it. */
export const MIN_PRODUCTION_SECRET_BYTES = 32;

/** Why production must not use this secret, or undefined when it may. */
export function productionSecretProblem(secret: string): string | undefined {
  const example = EXAMPLE_SECRETS.get(secret);
  if (example !== undefined) {
    return `is the placeholder published in ${example}; set a random secret of your own (e.g. openssl rand -base64 48)`;
  }
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_PRODUCTION_SECRET_BYTES) {
    return `is ${bytes} bytes long; production needs at least ${MIN_PRODUCTION_SECRET_BYTES} (e.g. openssl rand -base64 48)`;
  }
  return undefined;
}
