import jwt from 'jsonwebtoken';

export const TEST_SECRET = 'test-secret-that-is-long-enough-0123456789';

export function signToken(claims: Record<string, unknown> = {}, options: jwt.SignOptions = {}): string {
  return jwt.sign({ sub: 'test-user', ...claims }, TEST_SECRET, { algorithm: 'HS256', expiresIn: 300, ...options });
}

export function bearer(token: string = signToken()): string {
  return `Bearer ${token}`;
}
