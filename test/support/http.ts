import type { Response } from 'supertest';
import { expect } from 'vitest';

export const JSON_UTF8 = 'application/json; charset=utf-8';
export const HAL_JSON_UTF8 = 'application/hal+json; charset=utf-8';

export const SERVER_DECLINED_KEYS = ['timestamp', 'status', 'error', 'exception', 'message', 'path'] as const;

export interface ServerDeclined {
  readonly status: number;
  readonly error: string;
  readonly exception: string;
  /** The exact text, or a pattern the text must match. */
  readonly message: string | RegExp;
  readonly path: string;
}

/** Spec part 7 / D6: the server-declined body, exactly these six keys, as `application/json`. */
export function expectServerDeclined(response: Response, expected: ServerDeclined): void {
  expect(response.status).toBe(expected.status);
  expect(response.headers['content-type']).toBe(JSON_UTF8);
  expect(Object.keys(response.body as object)).toEqual([...SERVER_DECLINED_KEYS]);
  expect(response.body).toEqual({
    timestamp: expect.any(Number),
    status: expected.status,
    error: expected.error,
    exception: expected.exception,
    message: typeof expected.message === 'string' ? expected.message : expect.stringMatching(expected.message),
    path: expected.path,
  });
  const { timestamp } = response.body as { timestamp: number };
  expect(Math.abs(Date.now() - timestamp)).toBeLessThan(60_000);
}

/** D6: clients never see how the server is built. */
export function expectNoInternals(response: Response): void {
  expect(response.text).not.toMatch(/\bat [\w.<>]+ \(|\bat (file|node):|\.ts:\d+:\d+/);
  expect(response.text).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE)\b.+\b(FROM|INTO|SET)\b/i);
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
