import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import jwt from 'jsonwebtoken';

/** The development secret the service creates when no key is configured (never in production, D26). */
export async function readOrCreateDevelopmentSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'jwt-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

export interface TokenClaims {
  readonly subject: string;
  readonly expiresInSeconds: number;
  readonly issuer?: string;
  readonly audience?: string;
  readonly scope?: string;
}

export function signDevelopmentToken(secret: string, claims: TokenClaims): string {
  return jwt.sign(claims.scope ? { scope: claims.scope } : {}, secret, {
    algorithm: 'HS256',
    subject: claims.subject,
    expiresIn: claims.expiresInSeconds,
    ...(claims.issuer ? { issuer: claims.issuer } : {}),
    ...(claims.audience ? { audience: claims.audience } : {}),
  });
}
