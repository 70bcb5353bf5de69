import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32Combine, crc32Shift } from './crc32-combine.js';

describe('CRC-32 of texts one after the other from the CRC of each', () => {
  it('equals the CRC-32 of the joined bytes, whatever the lengths', () => {
    for (const [firstLength, secondLength] of [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [3, 7],
      [100, 4096],
      [65_537, 123_457],
      [17, 1_048_576 + 3],
    ] as const) {
      const first = randomBytes(firstLength);
      const second = randomBytes(secondLength);

      const combined = crc32Combine(crc32(first), crc32(second), crc32Shift(second.length));

      expect(combined).toBe(crc32(Buffer.concat([first, second])));
    }
  });

  it('extends a CRC over many texts in turn as one reading of them all', () => {
    const texts = ['retry: 2000\nid: 3\n\n', 'id: 4\nevent: x\ndata: {"sku":"Ä-1"}\n\n', ': keep-alive\n\n'];
    let crc = 0;
    for (const text of texts) crc = crc32Combine(crc, crc32(text), crc32Shift(Buffer.byteLength(text)));

    expect(crc).toBe(crc32(texts.join('')));
  });
});
