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

/** One number literal as parseJson gives it: a LosslessNumber only when a double cannot hold it exactly. */
export function jsonNumber(text: string): number | LosslessNumber {
  return LONG_NUMBER_LITERAL.test(text) ? toNumberOrLossless(text) : Number(text);
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
 * What plain JSON.stringify writes for a LosslessNumber's own `isLosslessNumber` field. Every response holding one
 * contains it, and a client's string cannot forge it unescaped; an object key of that name only costs the replacer.
 */
const LOSSLESS_FIELD = '"isLosslessNumber":true';

/**
 * JSON.stringify that prints LosslessNumber values as raw JSON numbers. The common case (no such value) is plain
 * JSON.stringify, which stays in native code; a replacer calls back into JavaScript for every key and value.
 */
export function stringifyJson(value: unknown): string {
  const plain = JSON.stringify(value) as string | undefined;
  if (plain === undefined || !plain.includes(LOSSLESS_FIELD)) return plain as string;
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

/** Whether a value holds a string or key with a surrogate that is not half of a pair. */
export function holdsLoneSurrogate(value: unknown): boolean {
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
  return escapesSurrogate(text) && holdsLoneSurrogate(parsed);
}

/** Whether JSON text escapes a surrogate at all: only then can a parsed value hold a lone one. */
export function escapesSurrogate(text: string): boolean {
  return SURROGATE_ESCAPE.test(text);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;

/** The index of the quote that closes the string opening at `start`; strings are skipped by the native indexOf. */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/** Above this many keys an object's keys go into a Set, so one object with very many keys stays linear. */
const SPANS_PER_OBJECT = 16;
/** A frame's base for an open array, whose strings are never keys. */
const ARRAY_FRAME = -1;
/** A frame's base for an object whose keys are kept in `sets` (very many keys, or an escaped one). */
const SET_FRAME = -2;

/** Whether the characters from `start` to `end` are the same as as many from `other` on: two keys of one length. */
function sameSpelling(text: string, start: number, end: number, other: number): boolean {
  for (let offset = 0; start + offset < end; offset++) {
    if (text.charCodeAt(start + offset) !== text.charCodeAt(other + offset)) return false;
  }
  return true;
}

function hasBackslash(text: string, start: number, end: number): boolean {
  for (let index = start; index < end; index++) if (text.charCodeAt(index) === BACKSLASH) return true;
  return false;
}

/** A key as JSON.parse names it; `start` and `end` are its quotes. */
function keyAt(text: string, start: number, end: number, escaped: boolean): string {
  return escaped ? (JSON.parse(text.slice(start, end + 1)) as string) : text.slice(start + 1, end);
}

/**
 * The first key that an object of this (already parsed, so valid) JSON text names twice, or undefined. JSON.parse
 * keeps the last of them silently, so `"magnitude":1,"magnitude":100000` would act on a value the client may not
 * have meant (issue 15). One pass: strings are skipped whole, and each character outside them is looked at once.
 * An object's keys are compared where they stand in the text, so a body of many small objects allocates nothing
 * per object; an object with an escaped key or very many keys collects them decoded in a Set instead.
 */
export function firstRepeatedKey(text: string): string | undefined {
  // Per open container: where its key spans start in `spans`, or ARRAY_FRAME, or SET_FRAME.
  const frames: number[] = [];
  // The keys of the open span-frame objects as start and end offsets of their content, innermost object last.
  const spans: number[] = [];
  // The Set of a SET_FRAME object, at its depth.
  const sets: Set<string>[] = [];
  let depth = 0;
  let spanCount = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = closingQuote(text, index);
      const base = depth > 0 ? frames[depth - 1]! : ARRAY_FRAME;
      if (base !== ARRAY_FRAME) {
        let next = end + 1;
        while (next < text.length && text.charCodeAt(next) <= 0x20) next++;
        if (text.charCodeAt(next) === COLON) {
          const start = index + 1;
          if (base === SET_FRAME) {
            const key = keyAt(text, index, end, hasBackslash(text, start, end));
            const keys = sets[depth - 1]!;
            if (keys.has(key)) return key;
            keys.add(key);
          } else {
            const escaped = hasBackslash(text, start, end);
            if (!escaped && spanCount - base < 2 * SPANS_PER_OBJECT) {
              const length = end - start;
              for (let span = base; span < spanCount; span += 2) {
                if (spans[span + 1]! - spans[span]! === length && sameSpelling(text, start, end, spans[span]!)) {
                  return text.slice(start, end);
                }
              }
              spans[spanCount++] = start;
              spans[spanCount++] = end;
            } else {
              // The keys so far are unescaped and distinct; from here on they are compared decoded.
              const keys = new Set<string>();
              for (let span = base; span < spanCount; span += 2) keys.add(text.slice(spans[span], spans[span + 1]));
              const key = keyAt(text, index, end, escaped);
              if (keys.has(key)) return key;
              keys.add(key);
              sets[depth - 1] = keys;
              frames[depth - 1] = SET_FRAME;
              spanCount = base;
            }
          }
        }
      }
      index = end;
    } else if (code === OPEN_OBJECT) {
      frames[depth++] = spanCount;
    } else if (code === OPEN_ARRAY) {
      frames[depth++] = ARRAY_FRAME;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      const base = frames[--depth]!;
      if (base >= 0) spanCount = base;
    }
  }
  return undefined;
}
