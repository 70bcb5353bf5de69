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
