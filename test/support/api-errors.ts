import type { Response } from 'supertest';
import { expect } from 'vitest';
import { HAL_JSON_UTF8 } from './http.js';

export interface ApiDeclined {
  readonly status: number;
  /** The exact text, or an asymmetric matcher such as `expect.stringContaining(...)`. */
  readonly message: unknown;
  readonly messageKey?: string;
  readonly obj?: readonly unknown[];
  readonly class?: string;
}

/**
 * Spec part 7 / D6: the API-declined body as `application/hal+json`, exactly the given fields in the spec's order
 * (`message, messageKey, obj, httpStatus, class`), with `httpStatus` the status as a string.
 */
export function expectApiDeclined(response: Response, expected: ApiDeclined): void {
  const body: Record<string, unknown> = { message: expected.message };
  if (expected.messageKey !== undefined) body.messageKey = expected.messageKey;
  if (expected.obj !== undefined) body.obj = expected.obj;
  body.httpStatus = String(expected.status);
  if (expected.class !== undefined) body.class = expected.class;

  expect({ status: response.status, contentType: response.headers['content-type'] }).toEqual({
    status: expected.status,
    contentType: HAL_JSON_UTF8,
  });
  expect(response.body).toEqual(body);
  expect(Object.keys(response.body as object)).toEqual(Object.keys(body));
}

/** D6: a 400 core.validation.error naming every invalid field with its path, in this order; no `class`. */
export function expectValidationError(response: Response, problems: readonly (readonly [string, string])[]): void {
  expectApiDeclined(response, {
    status: 400,
    message: problems.map(([path, message]) => `${path}: ${message}`).join('; '),
    messageKey: 'core.validation.error',
    obj: problems.map(([path]) => path),
  });
}
