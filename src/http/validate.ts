import { ZodObject, type z } from 'zod';
import { validationError, type ApiError } from './api-error.js';

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

const MAX_NESTING = 64;

type StructuralProblem = { path: PropertyKey[]; message: string };

const nestedTooDeep = (problem: StructuralProblem): boolean => problem.path.length >= MAX_NESTING;

/**
 * Problems no schema reports: strings holding a NUL character, which PostgreSQL text cannot store, and values
 * nested deeper than any request needs (which would also exhaust recursion further on). Free `details` objects
 * keep their NUL characters: they are stored as JSON text, where NUL is an escape like any other. The walk stops
 * descending at the nesting limit, so its own recursion stays shallow; one path array is shared and copied only
 * for a problem, because bulk bodies hold millions of values.
 */
function structuralProblems(input: unknown, base: readonly PropertyKey[]): StructuralProblem[] {
  const problems: StructuralProblem[] = [];
  const path: PropertyKey[] = [...base];
  const visit = (value: unknown, inDetails: boolean): void => {
    if (typeof value === 'string') {
      if (!inDetails && value.includes('\u0000'))
        problems.push({ path: [...path], message: 'must not contain a NUL character' });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (path.length >= MAX_NESTING) {
      problems.push({ path: [...path], message: `must not be nested deeper than ${MAX_NESTING} levels` });
      return;
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        path.push(index);
        visit(value[index], inDetails);
        path.pop();
      }
    } else if (isJsonObject(value)) {
      for (const key of Object.keys(value)) {
        path.push(key);
        visit(value[key], inDetails || key === 'details');
        path.pop();
      }
    }
  };
  visit(input, false);
  return problems;
}

/**
 * A query parameter sent empty is absent: `?sku=&uom=` is what an RFC 6570 template (`?sku={sku}&uom={uom}`)
 * expanded without its optional variables gives, and HAL clients send it so (issue 13).
 */
function withoutEmptyParameters(query: unknown): unknown {
  if (!isJsonObject(query)) return query;
  // Most queries have no empty parameter: they are given on as they are, not copied (issue 38 item 4).
  for (const name in query) {
    if (query[name] === '') return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
  }
  return query;
}

/**
 * Query parameters the operation does not know, each naming the ones it does: a misspelt filter (`?SKU=A1`,
 * `?sku[]=A1`) would otherwise be ignored and the finder would answer everything (issue 15).
 */
function unknownParameters(schema: z.ZodType, query: unknown): StructuralProblem[] {
  if (!(schema instanceof ZodObject) || !isJsonObject(query)) return [];
  const shape = schema.shape as object;
  const unknown = Object.keys(query).filter((name) => !Object.hasOwn(shape, name));
  if (unknown.length === 0) return [];
  const message = `is not a parameter of this operation, which takes ${Object.keys(shape).join(', ')}`;
  return unknown.map((name) => ({ path: [name], message }));
}

/**
 * D6's problems of request input, collected over one input or over the parts of a bulk checked one by one: those no
 * schema reports first, then the schema's, each list in input order. Values nested too deep are never given to the
 * schema, and then only the problems no schema reports are named.
 */
export class InputProblems {
  private readonly structural: StructuralProblem[] = [];
  private readonly issues: StructuralProblem[] = [];
  private nestedTooDeep = false;

  get found(): boolean {
    return this.structural.length > 0 || this.issues.length > 0;
  }

  /** How many problems were found so far. */
  get count(): number {
    return this.structural.length + this.issues.length;
  }

  /** Checks `input`, which lies at `base` in the request; answers its parsed value when it has no problem. */
  check<S extends z.ZodType>(schema: S, input: unknown, base: readonly PropertyKey[] = []): z.output<S> | undefined {
    const structural = structuralProblems(input, base);
    this.add(structural);
    if (structural.some(nestedTooDeep)) this.nestedTooDeep = true;
    // Once a value nested too deep is found, only the problems no schema reports are named.
    if (this.nestedTooDeep) return undefined;
    const result = schema.safeParse(input, { reportInput: true });
    if (!result.success) {
      for (const issue of result.error.issues) {
        this.issues.push({ path: [...base, ...issue.path], message: describeIssue(issue) });
      }
    }
    return result.success && structural.length === 0 ? result.data : undefined;
  }

  add(problems: readonly StructuralProblem[]): void {
    for (const problem of problems) this.structural.push(problem);
  }

  /** The 400 core.validation.error naming every problem, its path formatted by `pathOf`. */
  error(pathOf: (path: readonly PropertyKey[]) => string): ApiError {
    const named = this.nestedTooDeep ? this.structural : [...this.structural, ...this.issues];
    return validationError(named.map((problem) => ({ path: pathOf(problem.path), message: problem.message })));
  }
}

/**
 * Parses request input with a zod schema; every problem becomes one entry of a 400 core.validation.error,
 * with `root` naming where a problem without a path lies (the body, a parameter, the query, a line) and `prefix`
 * put before every other path (`line 3: `).
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown, root = 'body', prefix = ''): z.output<S> {
  const input = root === 'query' ? withoutEmptyParameters(raw) : raw;
  const problems = new InputProblems();
  if (root === 'query') problems.add(unknownParameters(schema, input));
  const data = problems.check(schema, input);
  if (!problems.found) return data as z.output<S>;
  throw problems.error((path) => {
    const formatted = formatIssuePath(path);
    return formatted ? prefix + formatted : root;
  });
}
