import { crc32, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipFrames, SharedDeflate } from './gzip-frames.js';

describe('gzip frames around shared deflate segments (D39)', () => {
  it('gives each stream a gzip body that decodes to exactly what it sent, though they share segments', () => {
    const deflate = new SharedDeflate(1);
    const first = new GzipFrames(deflate);
    const second = new GzipFrames(deflate);
    const batch = 'id: 7\nevent: product.event.updated\ndata: {"sku":"Ä-1"}\n\n'.repeat(40);

    const firstBody = [first.frame('retry: 2000\nid: 3\n\n'), first.frame(batch), first.end()];
    const secondBody = [second.frame('retry: 2000\nid: 5\n\n'), second.frame(batch), second.frame(': keep-alive\n\n')];
    secondBody.push(second.end());

    expect(gunzipSync(Buffer.concat(firstBody)).toString()).toBe(`retry: 2000\nid: 3\n\n${batch}`);
    expect(gunzipSync(Buffer.concat(secondBody)).toString()).toBe(`retry: 2000\nid: 5\n\n${batch}: keep-alive\n\n`);
    expect(firstBody[1]).toBe(secondBody[1]);
  });

  it('ends a stream of many shared segments with the CRC-32 and length of exactly the text it sent', () => {
    const deflate = new SharedDeflate(6);
    const stream = new GzipFrames(deflate);
    const texts = Array.from({ length: 50 }, (_, n) => `id: ${n}\ndata: {"label":"Größe ${'€'.repeat(n * 7)}"}\n\n`);

    const body = Buffer.concat([...texts.map((text) => stream.frame(text)), stream.end()]);

    const text = texts.join('');
    expect(body.readUInt32LE(body.length - 8)).toBe(crc32(text));
    expect(body.readUInt32LE(body.length - 4)).toBe(Buffer.byteLength(text));
    expect(gunzipSync(body).toString()).toBe(text);
  });

  it('compresses a batch sent again on a later turn anew', async () => {
    const deflate = new SharedDeflate(1);
    const kept = deflate.segment('id: 1\n\n');
    await new Promise((resolve) => setImmediate(resolve));

    expect(deflate.segment('id: 1\n\n')).not.toBe(kept);
    expect(deflate.segment('id: 1\n\n')).toEqual(kept);
  });

  it('ends a stream that sent nothing with a valid empty body', () => {
    expect(gunzipSync(new GzipFrames(new SharedDeflate(1)).end()).toString()).toBe('');
  });
});
