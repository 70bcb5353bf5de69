import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { productionSecretProblem } from '../../src/auth/example-secrets.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { closedPort } from '../support/ports.js';
import { ensureBuilt, PROJECT_ROOT, startService, waitForExit } from '../support/service-process.js';

const DATABASE_URL = 'postgres://inventory@127.0.0.1:1/inventory';

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(path.join(PROJECT_ROOT, directory), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(PROJECT_ROOT, path.join(entry.parentPath, entry.name)));
}

/** Every literal value of AUTH_JWT_SECRET the repository's examples print (`…` and `$(…)` are no value). */
async function exampleSecrets(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const file of ['README.md', 'docker-compose.yml', ...(await filesUnder('deploy'))]) {
    const text = await readFile(path.join(PROJECT_ROOT, file), 'utf8');
    for (const match of text.matchAll(/AUTH_JWT_SECRET(?:=|: )([^\s`'"…$]+)/g)) found.set(match[1]!, file);
  }
  return found;
}

function productionError(secret: string): string {
  try {
    loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: secret, DATABASE_URL });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return '';
}

describe('the secret production starts with (D37)', () => {
  let placeholder: string;
  beforeAll(async () => {
    const secretYaml = await readFile(path.join(PROJECT_ROOT, 'deploy/kubernetes/secret.yaml'), 'utf8');
    placeholder = /\n {2}AUTH_JWT_SECRET: (\S+)\n/.exec(secretYaml)![1]!;
    await ensureBuilt();
  }, 180_000);

  it("refuses to start the service with deploy/kubernetes/secret.yaml's placeholder, naming where it is published", async () => {
    const service = startService(
      { NODE_ENV: 'production', AUTH_JWT_SECRET: placeholder, DATABASE_URL },
      await closedPort(),
    );
    expect(await waitForExit(service, 15_000)).toStrictEqual({ code: 1, signal: null });
    expect(service.stderr()).toContain(
      'Invalid configuration: AUTH_JWT_SECRET: is the placeholder published in deploy/kubernetes/secret.yaml; ' +
        'set a random secret of your own (e.g. openssl rand -base64 48)',
    );
  }, 20_000);

  it('refuses every secret the README, docker-compose.yml and deploy/ print', async () => {
    const examples = await exampleSecrets();
    expect([...examples.keys()]).toContain(placeholder);
    for (const [secret, file] of examples) {
      expect(productionSecretProblem(secret), `${secret} in ${file}`).toBeDefined();
      expect(productionError(secret)).toMatch(/^Invalid configuration: AUTH_JWT_SECRET: is /);
    }
  });

  it('refuses a secret shorter than 32 bytes, saying how long it is', () => {
    expect(productionError('a-secret-of-31-bytes-0123456789')).toBe(
      'Invalid configuration: AUTH_JWT_SECRET: is 31 bytes long; production needs at least 32 ' +
        '(e.g. openssl rand -base64 48)',
    );
  });

  it('accepts a random secret of 32 bytes, and development the short example', () => {
    expect(productionError(randomBytes(24).toString('base64'))).toBe('');
    expect(loadConfig({ AUTH_JWT_SECRET: 'change-me-please-0123' }).auth.secret).toBe('change-me-please-0123');
  });
});
