import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { JsonElements, type JsonElement } from './http/json-elements.js';
import { escapesLoneSurrogate, firstRepeatedKey, parseJson, stringifyJson } from './json.js';

describe('stringifyJson', () => {
  it('writes a value without LosslessNumber as JSON.stringify does', () => {
    const value = { sku: 'A"isLosslessNumber":true', quantity: 1.5, nested: [{ a: null }, 'x'] };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('writes a nested LosslessNumber as the raw number it holds', () => {
    const value = { units: [{ magnitude: new LosslessNumber('123456789012345.123456') }], ol: 2 };
    expect(stringifyJson(value)).toBe('{"units":[{"magnitude":123456789012345.123456}],"ol":2}');
  });

  it("keeps a client's object that names isLosslessNumber as an object", () => {
    const value = { details: { isLosslessNumber: true, value: '1' }, magnitude: new LosslessNumber('1e21') };
    expect(stringifyJson(value)).toBe('{"details":{"isLosslessNumber":true,"value":"1"},"magnitude":1e21}');
  });
});

describe('firstRepeatedKey', () => {
  it('finds a key named twice in one object', () => {
    expect(firstRepeatedKey('{"magnitude":1,"magnitude":100000}')).toBe('magnitude');
  });

  it('finds a repeat in a nested object inside an array', () => {
    expect(firstRepeatedKey('[{"a":1},{"b":{"c":1, "c" :2}}]')).toBe('c');
  });

  it('treats an escaped spelling as the same key', () => {
    expect(firstRepeatedKey('{"sku":"A","\\u0073ku":"B"}')).toBe('sku');
  });

  it('accepts the same key in sibling objects and in string values', () => {
    expect(firstRepeatedKey('[{"sku":"sku"},{"sku":"\\"sku\\":"}]')).toBeUndefined();
  });

  it('accepts keys ending in backslashes and values holding quotes and braces', () => {
    expect(firstRepeatedKey('{"a\\\\":"}{[\\"","a":{"x":[1,{"x":2}]},"b":"\\\\"}')).toBeUndefined();
  });

  it('finds a repeat after a nested container closed', () => {
    expect(firstRepeatedKey('{"a":{"a":[1,2]},"b":[],"a":3}')).toBe('a');
  });

  it('accepts an object of 50,000 distinct keys and finds a repeat after them', () => {
    const entries = Array.from({ length: 50_000 }, (_, position) => `"key${position}":${position}`);
    expect(firstRepeatedKey(`{${entries.join(',')}}`)).toBeUndefined();
    expect(firstRepeatedKey(`{${entries.join(',')},"key3":0}`)).toBe('key3');
  });

  it('finds an escaped repeat of a key once an object has many keys', () => {
    const entries = Array.from({ length: 40 }, (_, position) => `"key${position}":${position}`);
    expect(firstRepeatedKey(`{${entries.join(',')},"\\u006bey0":0}`)).toBe('key0');
    expect(firstRepeatedKey(`{"k\\u0065y0":0,${entries.join(',')}}`)).toBe('key0');
  });

  it('looks at a million-character string value in linear time', () => {
    const text = `{"details":"${'\\\\'.repeat(500_000)}","details":1}`;
    expect(firstRepeatedKey(text)).toBe('details');
  });
});

/** The check as it was before keys were compared in place: a Set of decoded keys per open object. */
function firstRepeatedKeyBySets(text: string): string | undefined {
  const open: (Set<string> | null)[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const keys = open[open.length - 1];
      if (keys && /^[ \t\n\r]*:/.test(text.slice(end + 1))) {
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      index = end;
    } else if (char === '{') {
      open.push(new Set());
    } else if (char === '[') {
      open.push(null);
    } else if (char === '}' || char === ']') {
      open.pop();
    }
  }
  return undefined;
}

/** A string as JSON text, each character written plainly or as a `\u` escape as `escapes` says. */
function quoted(value: string, escapes: readonly boolean[]): string {
  const body = [...value].map((char, position) =>
    escapes[position % Math.max(escapes.length, 1)]
      ? [...char].map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
      : JSON.stringify(char).slice(1, -1),
  );
  return `"${body.join('')}"`;
}

// Few distinct characters, so keys repeat often; quotes, backslashes and braces inside strings must not confuse it.
const jsonChar = fc.constantFrom(
  'a',
  'b',
  's',
  'k',
  'u',
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  ' ',
  'é',
  '\u2028',
  '𝄞',
);
// Mostly written plainly, which is the common case that is compared in place.
const escapesOf = fc.oneof(
  { arbitrary: fc.constant([]), weight: 3 },
  { arbitrary: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), weight: 1 },
);
const jsonString = fc
  .tuple(fc.string({ unit: jsonChar, maxLength: 4 }), escapesOf)
  .map(([value, escapes]) => quoted(value, escapes));
const space = fc.constantFrom('', '', ' ', '\n  ', '\t', '\r\n');

/**
 * An object with more keys than are compared in place: distinct keys, perhaps one of them again in another spelling,
 * and one value that is a generated text.
 */
function manyKeysObject(nested: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.integer({ min: 1, max: 40 }),
      escapesOf,
      fc.option(fc.tuple(fc.nat(), escapesOf), { nil: undefined }),
      fc.nat(),
      nested,
    )
    .map(([count, escapes, repeat, nestedAt, item]) => {
      const entries = Array.from({ length: count }, (_, position) => ({ key: `k${position}`, escapes }));
      if (repeat !== undefined) entries.push({ key: `k${repeat[0] % count}`, escapes: repeat[1] });
      const values = entries.map((_, position) => (position === nestedAt % entries.length ? item : `${position}`));
      return `{${entries.map(({ key, escapes }, position) => `${quoted(key, escapes)}:${values[position]}`).join(',')}}`;
    });
}

/** JSON texts whose objects may name a key more than once, at any depth. */
const jsonText = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('0', '-1.5e3', 'true', 'null', '12345678901234567890'),
    jsonString,
    fc
      .array(fc.tuple(space, tie('value'), space), { maxLength: 5 })
      .map((items) => `[${items.map(([before, item, after]) => before + item + after).join(',')}]`),
    fc
      .array(fc.tuple(space, jsonString, space, space, tie('value')), { maxLength: 6 })
      .map(
        (entries) =>
          `{${entries.map(([before, key, beforeColon, afterColon, item]) => before + key + beforeColon + ':' + afterColon + item).join(',')}}`,
      ),
    manyKeysObject(tie('value')),
  ),
})).value;

describe('firstRepeatedKey against the Set-based check', () => {
  it('answers the same for generated JSON texts', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        JSON.parse(text);
        expect(firstRepeatedKey(text)).toBe(firstRepeatedKeyBySets(text));
      }),
      { numRuns: 3_000, seed: 20_261_126 },
    );
  });
});

/** What JsonElements hands out for `text` cut at `cuts`, or the message of what it throws. */
function streamed(text: string, cuts: readonly number[]): JsonElement[] | string {
  const elements = new JsonElements({ bytes: 1024 * 1024, text: '1mb' });
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const found: JsonElement[] = [];
  try {
    let from = 0;
    for (const point of [...points, text.length]) {
      found.push(...elements.write(text.slice(from, point)));
      from = point;
    }
    found.push(...elements.end());
  } catch (error) {
    return (error as Error).message;
  }
  return found;
}

/**
 * What the body read whole gives: its elements (itself when no array), or the message of its refusal. One answer
 * differs on purpose: read whole, a body with a long number and a key named twice with two values was refused as
 * malformed JSON (the exact parser's "Duplicate key"); read as it arrives, it is refused for the repeated key.
 */
function buffered(text: string): JsonElement[] | string {
  const repeated = firstRepeatedKey(text);
  const value = repeated === undefined ? parseJson(text) : JSON.parse(text);
  if (escapesLoneSurrogate(text, value)) {
    return 'Request body is not readable: a string holds a lone UTF-16 surrogate, which is no character';
  }
  if (repeated !== undefined) {
    return `Request body is not readable: an object names the key ${JSON.stringify(repeated)} more than once`;
  }
  return Array.isArray(value) ? value.map((item, index) => ({ index, value: item })) : [{ index: undefined, value }];
}

describe('JsonElements (issue 26)', () => {
  it('answers what the body read whole gives, however the text is cut into pieces', () => {
    const body = fc.oneof(
      jsonText,
      fc.array(jsonText, { maxLength: 6 }).map((items) => `[${items.join(',')}]`),
    );
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
        expect(streamed(text, cuts)).toEqual(buffered(text));
      }),
      { numRuns: 2_000, seed: 20_261_127 },
    );
  });

  it('keeps the digits of a number that a double would round', () => {
    expect(streamed('[{"magnitude":123456789012345.123456},{"magnitude":1.5}]', [17])).toEqual([
      { index: 0, value: { magnitude: new LosslessNumber('123456789012345.123456') } },
      { index: 1, value: { magnitude: 1.5 } },
    ]);
  });

  it('keeps a __proto__ key as a key of the object', () => {
    const [element] = streamed('[{"details":{"__proto__":{"x":1}}}]', []) as JsonElement[];
    expect(Object.keys((element!.value as { details: object }).details)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf((element!.value as { details: object }).details)).toBe(Object.prototype);
  });

  it('keeps U+FEFF inside a string, which the parser alone would drop, and refuses it after a lone backslash', () => {
    const text = '[{"sku":"\uFEFFA\uFEFFB\\\\\uFEFF"}]';
    for (const cut of [0, 9, 10, 11, text.length - 4]) expect(streamed(text, [cut])).toEqual(buffered(text));
    expect(streamed('["\\\uFEFF"]', [])).toMatch(/^Request body is not readable: malformed JSON \(.+\)$/);
  });

  it('finds a lone surrogate whose escape is cut between two pieces', () => {
    const text = '[{"sku":"A\\uD800"}]';
    expect(streamed(text, [text.indexOf('D800')])).toBe(
      'Request body is not readable: a string holds a lone UTF-16 surrogate, which is no character',
    );
  });

  it('answers malformed JSON after a repeated key with the malformed JSON, as the body read whole does', () => {
    expect(streamed('[{"a":1,"a":2},{"b":]', [])).toMatch(/^Request body is not readable: malformed JSON \(.+\)$/);
  });

  it('answers a body that ends too early, or goes on after its value, as malformed JSON', () => {
    expect(streamed('[{"sku":"A"}', [])).toBe(
      'Request body is not readable: malformed JSON (Unexpected end of JSON input)',
    );
    expect(streamed('[{"sku":"A"}] []', [])).toMatch(/^Request body is not readable: malformed JSON \(.+\)$/);
    expect(streamed('', [])).toEqual([]);
  });

  it('refuses an element larger than the limit of one resource with 413 naming it, before it has ended', () => {
    const elements = new JsonElements({ bytes: 100, text: '100b' });
    expect(elements.write('[{"sku":"A"}, {"sku":"B"},')).toHaveLength(2);
    expect(() => elements.write(`{"description":"${'x'.repeat(100)}`)).toThrow(
      'Request body element [2] exceeds the limit of one resource, 100b',
    );
  });
});
