import { z } from '../openapi/zod.js';

/** Keys and names (SKU, locationId, erpCode, BKs, positions, types) are at most this long (README, Limits). */
export const MAX_KEY_LENGTH = 255;

/** Free text (descriptions, a problem's messageText) is at most this long (README, Limits). */
export const MAX_TEXT_LENGTH = 4000;

/** A key as sent (never trimmed) that names something: at most 255 characters, and not only whitespace. */
export function keySchema(description?: string) {
  const key = z
    .string()
    .max(MAX_KEY_LENGTH)
    .refine((value) => value.trim() !== '', { error: 'must not be blank' });
  return description ? key.openapi({ description }) : key;
}
