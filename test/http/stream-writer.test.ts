import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { StreamWriter, type SharedBuffer, type StreamLimits } from '../../src/http/stream-writer.js';

const KIB = 1024;

/** A response whose client takes nothing: every write is accepted into its buffer and asks the writer to wait. */
class ResponseThatTakesNothing extends EventEmitter {
  write(_text?: unknown): boolean {
    return false;
  }

  destroy(): void {
    this.emit('close');
  }
}

function writerFor(limits: StreamLimits, shared: SharedBuffer): StreamWriter {
  return new StreamWriter(
    new ResponseThatTakesNothing() as unknown as Response,
    limits,
    () => undefined,
    undefined,
    shared,
  );
}

/** Sends 64 KiB pieces until one is made to wait; answers how many were sent before. */
async function sendUntilHeld(writer: StreamWriter): Promise<number> {
  const piece = 'x'.repeat(64 * KIB);
  for (let sent = 0; ; sent++) {
    const accepted = writer.send(piece);
    const waited = await Promise.race([accepted.then(() => false), new Promise((r) => setImmediate(r, true))]);
    if (waited) {
      writer.end('closed');
      return sent;
    }
  }
}

describe('StreamWriter (D39)', () => {
  const limits = { bufferBytes: 1024 * KIB, totalBufferBytes: 1024 * KIB, stallTimeoutMs: 60_000 };

  it('lets a stream whose client takes nothing hold STREAM_BUFFER_BYTES while the instance holds less in all', async () => {
    const shared = { held: 0 };
    const writer = writerFor(limits, shared);

    const sent = await sendUntilHeld(writer);

    // The first piece went to the response; 1 MiB more waited before the one that passed it.
    expect(sent).toBe(1 + 16);
    expect(shared.held).toBe(0);
  });

  it('makes a stream whose client takes nothing wait with one chunk queued once the instance holds more than STREAM_BUFFER_TOTAL_BYTES', async () => {
    const shared = { held: 0 };
    const first = writerFor(limits, shared);
    const second = writerFor(limits, shared);
    const piece = 'x'.repeat(64 * KIB);
    for (let i = 0; i < 18; i++) void first.send(piece);
    expect(shared.held).toBe(17 * 64 * KIB);

    const sent = await sendUntilHeld(second);

    // The first piece went to the response, the second waits in the queue and makes the writer wait.
    expect(sent).toBe(1);
    first.end('closed');
    expect(shared.held).toBe(0);
  });

  it('reads ahead only when what waits leaves room for it: a stream whose client takes nothing holds no read-ahead', async () => {
    const writer = writerFor(limits, { held: 0 });
    expect(await writer.ready(256 * KIB)).toBe(true);
    const piece = 'x'.repeat(64 * KIB);
    // The first piece goes to the response, the next 13 wait: 832 KiB.
    for (let i = 0; i < 14; i++) void writer.send(piece);

    const room = writer.ready(128 * KIB);
    const readAhead = writer.ready(256 * KIB);

    expect(await room).toBe(true);
    const waited = await Promise.race([readAhead.then(() => false), new Promise((r) => setImmediate(r, true))]);
    expect(waited).toBe(true);
    writer.end('closed');
    expect(await readAhead).toBe(false);
  });

  it('hands a long text on as it is after what was gathered, not joined to it', async () => {
    const written: string[] = [];
    const res = new (class extends ResponseThatTakesNothing {
      override write(text?: unknown): boolean {
        written.push(String(text));
        return written.length > 1;
      }
    })();
    const writer = new StreamWriter(res as unknown as Response, limits, () => undefined, undefined, { held: 0 });
    const event = 'e'.repeat(20 * KIB);

    await writer.send('[');
    await writer.send(event);
    res.emit('drain');

    expect(written).toEqual(['[', event]);
    writer.end('closed');
  });
});
