import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { firstRepeatedKey, stringifyJson } from './json.js';

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

  it('looks at a million-character string value in linear time', () => {
    const text = `{"details":"${'\\\\'.repeat(500_000)}","details":1}`;
    expect(firstRepeatedKey(text)).toBe('details');
  });
});
