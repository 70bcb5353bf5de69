import { z } from '../openapi/zod.js';

/** Keys and names (SKU, locationId, erpCode, BKs, positions, types) are at most this long (README, Limits). */
export const MAX_KEY_LENGTH = 255;

/** Free text (descriptions, a problem's messageText) is at most this long (README, Limits). */
export const MAX_TEXT_LENGTH = 4000;

/**
 * Issue 28: controls (C0, DEL, C1), format characters (zero-width, bidirectional marks, embeddings, overrides and
 * isolates, soft hyphen, BOM) and line/paragraph separators. In a key they show as nothing or reorder what follows,
 * so `A\u202eB\u200b` would look like another key. Letters, marks and emoji of any script stay allowed.
 */
// NUL is left out: every string of a body is already refused for it, with a message of its own. Control characters
// are what this pattern finds, hence the lint exception.
// eslint-disable-next-line no-control-regex
const HIDDEN_CHARACTER = /[\x01-\x1f\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}]/u;

/** True when the value holds a character that would hide or reorder what it shows (see HIDDEN_CHARACTER). */
export function containsHiddenCharacters(value: string): boolean {
  return HIDDEN_CHARACTER.test(value);
}

/** A string that identifies something: at most 255 characters, none of them hidden (may be blank or empty). */
export function keyText() {
  return z
    .string()
    .max(MAX_KEY_LENGTH)
    .refine((value) => !containsHiddenCharacters(value), {
      error: 'must not contain control, invisible or bidirectional formatting characters',
    });
}

/** A key as sent (never trimmed) that names something: at most 255 characters, and not only whitespace. */
export function keySchema(description?: string) {
  const key = keyText().refine((value) => value.trim() !== '', { error: 'must not be blank' });
  return description ? key.openapi({ description }) : key;
}
