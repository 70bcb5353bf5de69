import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { StreamWriter, type SharedBuffer, type StreamLimits } from '../../src/http/stream-writer.js';

const KIB = 1024;

/** A response whose client takes nothing: every write is accepted into its buffer and asks the writer to wait. */
class ResponseThatTakesNothing extends EventEmitter {
  write(): boolean {
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
});
