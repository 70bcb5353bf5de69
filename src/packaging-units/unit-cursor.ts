import { z } from '../openapi/zod.js';

export const SORT_PROPERTIES = ['createDt', 'expiresAt', 'quantity', 'pKey'] as const;
export type SortProperty = (typeof SORT_PROPERTIES)[number];
export type SortDirection = 'ASC' | 'DESC';

/**
 * D39: where the next page of a unit search starts, in the search's own order: the last unit's sort value (as
 * PostgreSQL's text, so timestamps keep their microseconds; null sorts last) and its id to break ties. The order
 * travels with it, so a cursor is never applied to a list sorted otherwise.
 */
export interface UnitCursor {
  readonly property: SortProperty;
  readonly direction: SortDirection;
  readonly key: string | null;
  readonly id: number;
}

/** What a sort value's text must look like before it is cast in SQL, so a forged cursor is a 400, never a 500. */
const KEY_TEXT: Record<SortProperty, RegExp> = {
  createDt: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2}$/,
  expiresAt: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2}$/,
  quantity: /^\d{1,40}(\.\d{1,40})?$/,
  pKey: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

export function unitCursorText(cursor: UnitCursor): string {
  const fields = [cursor.property, cursor.direction, cursor.key, cursor.id];
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

function parseUnitCursor(text: string): UnitCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) return undefined;
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 4) return undefined;
  const [property, direction, key, id] = fields as unknown[];
  if (!SORT_PROPERTIES.includes(property as SortProperty) || (direction !== 'ASC' && direction !== 'DESC')) {
    return undefined;
  }
  const cursor: UnitCursor = {
    property: property as SortProperty,
    direction,
    key: key as string | null,
    id: id as number,
  };
  const keyFits = key === null || (typeof key === 'string' && KEY_TEXT[cursor.property].test(key));
  if (!keyFits || !Number.isSafeInteger(id) || (id as number) < 1) return undefined;
  // Only the exact text this service wrote is a cursor.
  return unitCursorText(cursor) === text ? cursor : undefined;
}

export const unitCursorSchema = z
  .string()
  .transform((text, ctx) => {
    const cursor = parseUnitCursor(text);
    if (cursor === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be the cursor of a next link' });
      return z.NEVER;
    }
    return cursor;
  })
  .openapi({ type: 'string', description: "Where the page starts: take it from the previous page's next link" });
