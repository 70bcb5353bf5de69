import type { ZodType, z } from 'zod';
import { escapesLoneSurrogate, firstRepeatedKey, parseJson } from '../json.js';
import { validationError } from './api-error.js';
import type { BodyLine } from './body.js';
import { unreadableBody } from './server-error.js';
import { isJsonObject, parseInput } from './validate.js';

/**
 * The JSON object of one NDJSON line, with the checks a JSON body gets (malformed JSON, lone surrogates, repeated
 * keys); every problem names the line, `what` says what the object must be.
 */
export function parseLineObject(line: BodyLine, what: string): Record<string, unknown> {
  const where = `line ${line.number}`;
  let parsed: unknown;
  try {
    parsed = parseJson(line.text);
  } catch (error) {
    throw unreadableBody(`${where}: malformed JSON (${(error as Error).message})`);
  }
  if (escapesLoneSurrogate(line.text, parsed)) {
    throw unreadableBody(`${where}: a string holds a lone UTF-16 surrogate, which is no character`);
  }
  const repeatedKey = firstRepeatedKey(line.text);
  if (repeatedKey !== undefined) {
    throw unreadableBody(`${where}: an object names the key ${JSON.stringify(repeatedKey)} more than once`);
  }
  if (!isJsonObject(parsed)) throw validationError([{ path: where, message: `must be ${what}` }]);
  return parsed;
}

/** `value` (one line's object) validated by `schema`, every field path prefixed with the line (`line 3: sku`). */
export function parseLineInput<S extends ZodType>(schema: S, value: unknown, line: BodyLine): z.output<S> {
  const where = `line ${line.number}`;
  return parseInput(schema, value, where, `${where}: `);
}
