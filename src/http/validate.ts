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
  if (issue.code === 'invalid_type') {
    return issue.input === undefined ? 'required' : `must be of type ${issue.expected}`;
  }
  if (issue.code === 'unrecognized_keys') return `unknown fields ${issue.keys.join(', ')}`;
  return issue.message;
}

/**
 * Parses request input with a zod schema; every problem becomes one entry of a 400 core.validation.error,
 * with `root` naming where a problem without a path lies (the body, a parameter).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root = 'body'): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw validationError(
    result.error.issues.map((issue) => ({ path: formatIssuePath(issue.path) || root, message: describeIssue(issue) })),
  );
}
