import type { z } from 'zod';
import { validationError } from './api-error.js';

/** `[3].baseUnit.magnitude`, `units[0].quantity`: the field paths D6 asks for. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  // zod's own wording ("Invalid input: …") is replaced; a schema's custom message is kept.
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    return issue.input === undefined ? 'required' : `must be of type ${issue.expected}`;
  }
  if (issue.code === 'unrecognized_keys') return `unknown fields ${issue.keys.join(', ')}`;
  return issue.message;
}

/** A plain JSON object (not an array, not a number the parser had to keep exact). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Paths of strings holding a NUL character, which PostgreSQL text cannot store. Free `details` objects are
 * exempt: they are stored as JSON text, where NUL is an escape like any other.
 */
function nulCharacterPaths(value: unknown, path: PropertyKey[] = []): PropertyKey[][] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulCharacterPaths(item, [...path, index]));
  if (!isJsonObject(value)) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === 'details' ? [] : nulCharacterPaths(item, [...path, key]),
  );
}

/**
 * Parses request input with a zod schema; every problem becomes one entry of a 400 core.validation.error,
 * with `root` naming where a problem without a path lies (the body, a parameter).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root = 'body'): z.output<S> {
  const nulPaths = nulCharacterPaths(input);
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success && nulPaths.length === 0) return result.data;
  throw validationError([
    ...nulPaths.map((path) => ({ path: formatIssuePath(path) || root, message: 'must not contain a NUL character' })),
    ...(result.error?.issues ?? []).map((issue) => ({
      path: formatIssuePath(issue.path) || root,
      message: describeIssue(issue),
    })),
  ]);
}
