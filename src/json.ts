import { randomBytes } from 'node:crypto';
import { isLosslessNumber, isSafeNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';

/**
 * A number literal that may carry more digits than a double holds exactly (D2 allows 15 + 6 digits).
 * Strings that merely look like this only cost the slower, exact parser.
 */
const LONG_NUMBER_LITERAL = /\d[\d.]{15,}|\d[eE]/;

function toNumberOrLossless(text: string): number | LosslessNumber {
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text);
}

/**
 * JSON.parse, except that numbers which a double cannot hold exactly arrive as LosslessNumber with their
 * source text, so quantities are never silently rounded.
 */
export function parseJson(text: string): unknown {
  return LONG_NUMBER_LITERAL.test(text) ? parseLossless(text, null, toNumberOrLossless) : JSON.parse(text);
}

// A per-process nonce makes the placeholder unguessable, so no client string can be turned into a raw number.
const NONCE = randomBytes(12).toString('hex');
const PLACEHOLDER = new RegExp(`"${NONCE}:(-?[0-9.eE+-]+)"`, 'g');

/**
 * JSON.stringify that prints LosslessNumber values as raw JSON numbers. The common case (no such value)
 * is plain JSON.stringify.
 */
export function stringifyJson(value: unknown): string {
  let sawLossless = false;
  const text = JSON.stringify(value, function (this: unknown, _key, item: unknown) {
    if (isLosslessNumber(item)) {
      sawLossless = true;
      return `${NONCE}:${(item as LosslessNumber).value}`;
    }
    return item;
  });
  return sawLossless ? text.replace(PLACEHOLDER, '$1') : text;
}

/** A value as JSON text for a json column, or SQL NULL when it is absent. */
export function jsonTextOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : stringifyJson(value);
}

// A lone surrogate can only reach a parsed string through a `\uD800`–`\uDFFF` escape: decoding UTF-8 never makes one.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  return Object.entries(value).some(([key, item]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(item));
}

/**
 * Whether the JSON text escapes a surrogate that is not half of a pair: no character, which UTF-8 and PostgreSQL
 * would turn into U+FFFD, so what is stored would differ from what was sent. Only texts with such an escape are walked.
 */
export function escapesLoneSurrogate(text: string, parsed: unknown): boolean {
  return SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(parsed);
}
