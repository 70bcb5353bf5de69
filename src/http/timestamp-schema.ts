import { z } from '../openapi/zod.js';

// ISO 8601 date and time with an offset: seconds and fraction optional, offset as Z, ±hh, ±hhmm or ±hh:mm.
const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-](\d{2})(?::?(\d{2}))?)$/;

/** The longest text ISO_WITH_OFFSET matches: `2030-05-01T12:30:15.123456789+02:00`. */
export const MAX_TIMESTAMP_LENGTH = 35;

/**
 * Milliseconds since the epoch for a UTC date and time. Date.UTC reads years 0–99 as 1900–1999, so the year is
 * set on its own (issue 15: `0099-06-15` was stored as 1999).
 */
function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, millis = 0): number {
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second, millis));
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

function daysIn(year: number, month: number): number {
  return new Date(utcMillis(year, month + 1, 0)).getUTCDate();
}

// What PostgreSQL and ISO text without an expanded year hold: 0001-01-01 to 9999-12-31, as a UTC instant.
const EARLIEST = utcMillis(1, 1, 1);
const LATEST = utcMillis(10_000, 1, 1) - 1;

/**
 * The instant as UTC ISO text with milliseconds, or undefined when the text is not such a datetime or the instant
 * falls outside the years 0001–9999.
 */
export function parseTimestamp(text: string): string | undefined {
  if (text.length > MAX_TIMESTAMP_LENGTH) return undefined;
  const match = ISO_WITH_OFFSET.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s = '0', fraction = '0', zone, offsetHours = '0', offsetMinutes = '0'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysIn(year!, month!)) return undefined;
  if (hour! > 23 || minute! > 59 || second! > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59)
    return undefined;
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const sign = zone?.startsWith('-') ? -1 : 1;
  const offset = zone === 'Z' ? 0 : sign * (Number(offsetHours) * 60 + Number(offsetMinutes));
  const instant = utcMillis(year!, month!, day!, hour!, minute!, second!, millis) - offset * 60_000;
  if (instant < EARLIEST || instant > LATEST) return undefined;
  return new Date(instant).toISOString();
}

/**
 * D3: any ISO 8601 datetime with an offset; one without an offset is refused. Parsed to UTC ISO text. Issue 28: a
 * longer string is refused by its length alone, so a huge one costs no more than any other oversized field.
 */
export const timestampSchema = z
  .string()
  .max(MAX_TIMESTAMP_LENGTH, {
    error: `must be an ISO 8601 datetime with an offset, at most ${MAX_TIMESTAMP_LENGTH} characters`,
  })
  .transform((text, ctx) => {
    const parsed = parseTimestamp(text);
    if (parsed === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 datetime with an offset' });
      return z.NEVER;
    }
    return parsed;
  })
  .openapi({ type: 'string', format: 'date-time' });
