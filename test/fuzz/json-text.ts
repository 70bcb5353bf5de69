import { KnownKey, type KeyPool } from './known-keys.js';

/**
 * JSON text written verbatim: number literals JSON.stringify cannot produce (`1e309`, `-0`, 22 digits) and
 * deep nesting built as text rather than as a 1 000-level object.
 */
export class RawJson {
  constructor(
    readonly text: string,
    readonly label = text,
  ) {}

  toString(): string {
    return this.label.length > 60 ? `${this.label.slice(0, 60)}…` : this.label;
  }
}

/** A long string that reports print by its label (`"x" × 100000`) instead of in full. */
export class LabelledString {
  constructor(
    readonly value: string,
    readonly label: string,
  ) {}

  toString(): string {
    return this.label;
  }
}

/** URL text sent as written (`..`, `%2F`, `%zz`), not percent-encoded again. */
export class Verbatim {
  constructor(readonly text: string) {}

  toString(): string {
    return `verbatim(${this.text.length > 60 ? `${this.text.slice(0, 60)}…` : this.text})`;
  }
}

/** An object holding `key` as an own, enumerable property, even for `__proto__`. */
export function withKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const existing of Object.keys(target)) {
    if (existing === key) continue;
    Object.defineProperty(copy, existing, { value: target[existing], enumerable: true, writable: true });
  }
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Serialises a generated value, resolving KnownKey placeholders against the pool. */
export function toJsonText(value: unknown, keys: KeyPool): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof KnownKey) return JSON.stringify(keys.resolve(value));
  if (value instanceof LabelledString) return JSON.stringify(value.value);
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => toJsonText(item, keys)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${toJsonText(record[key], keys)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Resolves placeholders in a plain value (query values, form fields, path segments). */
export function resolveText(value: unknown, keys: KeyPool): string {
  if (value instanceof KnownKey) return keys.resolve(value);
  if (value instanceof RawJson) return value.text;
  if (value instanceof LabelledString) return value.value;
  if (value instanceof Verbatim) return value.text;
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** A short, printable excerpt of a long text (what a failure report shows of a 100 kB body). */
export function excerpt(text: string, limit = 400): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}… (${text.length} characters)`;
}
