import fc from 'fast-check';
import { LabelledString, RawJson, Verbatim, withKey } from './json-text.js';

const HUGE = 100_000;

/** Strings that have broken parsers, encoders, SQL and templates before. */
export const EVIL_STRINGS: readonly string[] = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  '😀𝕏𝟘',
  '\uD83D',
  '\u202Eabc\u202C',
  'שלום عالم',
  'e\u0301\u0301\u0301\u0301',
  '\uFEFFbom',
  '\u0001\u001f\u007f',
  'line\u2028sep\u2029',
  "'; drop table product;--",
  "' OR '1'='1",
  '" OR ""="',
  '\\',
  '%s%n%x',
  '${7*7}{{7*7}}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '%2F..%2F',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-0',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '2026-02-30T25:61:61Z',
  ' PC',
  '12 PC',
  'x'.repeat(256),
];

/** Number literals as JSON text: beyond a double, beyond D2's 15 + 6 digits, signed zero, exponents. */
export const EVIL_NUMBERS: readonly string[] = [
  '1e309',
  '-1e309',
  '-0',
  '0',
  '-1',
  '1e-7',
  '0.0000001',
  '1234567890123456789012',
  '-1234567890123456789012',
  '9007199254740993',
  '123456789012345.123456',
  '1234567890123456.1',
  '999999999999999.999999',
  '0.000001',
  '1.0',
  '1E2',
  '2147483648',
  '-2147483649',
  '1e-400',
  '5e-324',
];

/** Deterministic text that does not compress: long keys beyond what a PostgreSQL btree index row can hold. */
export function incompressibleText(length: number): string {
  let state = 0x2545f491;
  let text = '';
  while (text.length < length) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    text += 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[(state >>> 0) % 64];
  }
  return text;
}

/** Short enough for a URL (Node refuses request heads beyond 16 kB before the app sees them). */
export const evilShortString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...EVIL_STRINGS), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
);

export const evilString: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: evilShortString, weight: 10 },
  {
    arbitrary: fc.constantFrom(
      new LabelledString('x'.repeat(HUGE), '"x" × 100000'),
      new LabelledString('😀'.repeat(HUGE / 2), '"😀" × 50000'),
      new LabelledString('\u0000'.repeat(HUGE), '"\\u0000" × 100000'),
      new LabelledString(incompressibleText(3_000), 'incompressible text of 3000 characters'),
      new LabelledString(incompressibleText(HUGE), 'incompressible text of 100000 characters'),
    ),
    weight: 1,
  },
);

export const evilNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...EVIL_NUMBERS.map((text) => new RawJson(text))),
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e309', '-0', '1'),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }),
);

function nested(depth: number, open: string, inner: string, close: string): RawJson {
  return new RawJson(open.repeat(depth) + inner + close.repeat(depth), `${open}×${depth} ${inner} ${close}×${depth}`);
}

/** Structures: wrong kinds, deep nesting (1 000 levels, and far beyond), huge arrays and prototype keys. */
export const evilStructure: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, [], {}, [[]], [null], { '': '' }, [{}]),
  fc.constantFrom(
    nested(1_000, '[', '1', ']'),
    nested(1_000, '{"a":', '1', '}'),
    nested(20_000, '[', '', ']'),
    nested(20_000, '{"details":', '{}', '}'),
  ),
  fc.constantFrom(
    new RawJson(`[${Array.from({ length: 10_000 }, () => '1').join(',')}]`, '[1 × 10000]'),
    new RawJson(`[${Array.from({ length: 10_000 }, () => '{}').join(',')}]`, '[{} × 10000]'),
    new RawJson(`[${Array.from({ length: 10_001 }, () => '"x"').join(',')}]`, '["x" × 10001]'),
  ),
  fc.constantFrom(
    withKey({}, '__proto__', { polluted: 'yes', toString: 'x' }),
    { constructor: { prototype: { polluted: 'yes' } } },
    withKey({ prototype: { polluted: 'yes' } }, '__proto__', null),
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Any value a malformed request may carry where something else belongs. */
export const evilValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: evilString, weight: 3 },
  { arbitrary: evilNumber, weight: 2 },
  { arbitrary: evilStructure, weight: 2 },
);

export const evilKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    '@class',
    'pKey',
    'ol',
    'id',
    '',
    'a\u0000b',
    '😀',
    '$where',
  ),
  fc.string({ maxLength: 12 }),
);

/** Path segments and query values as a client could write them into a URL. */
export const evilSegment: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    ...[
      '..',
      '.',
      '%2F',
      '%2f..%2f..',
      'a%2Fb',
      '%zz',
      '%',
      '%E0%A4%A',
      '%C0%AF',
      '%00',
      '%u0041',
      "'",
      '"',
      "'%3B%20drop%20table%20product%3B--",
      "'; drop table product;--",
      '%20',
      '~',
      ';a=b',
      'x'.repeat(4_000),
      '%F0%9F%98%80',
      '%E2%80%AE',
      '%C3%A9',
    ].map((text) => new Verbatim(text)),
  ),
  evilShortString,
);
