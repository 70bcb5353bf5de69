import { setImmediate } from 'node:timers';
import { constants, crc32, deflateRawSync } from 'node:zlib';

/** A gzip member's header: deflate, no name, no time, unknown system (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty last block of fixed codes: ends the deflate data. */
const LAST_BLOCK = Buffer.from([0x03, 0x00]);
/** Small state per call: a batch is a few KB, and every call starts its own window anyway. */
const SEGMENT_ZLIB = { windowBits: 12, memLevel: 5, finishFlush: constants.Z_SYNC_FLUSH } as const;

/**
 * D39: a text compressed once for every event stream that sends it. Each text becomes deflate blocks of its own,
 * ending on a byte boundary (a sync flush, no last block) and referring to nothing before it, so the same bytes are
 * valid in any stream whatever it sent before. The streams caught up with the feed write the same batch on the same
 * pulse, so a thousand of them cost one compression instead of a thousand zlib calls through the threadpool
 * (scenario 18, bench/notes.md). What was compressed is kept until the event loop's next turn.
 */
export class SharedDeflate {
  private readonly thisTurn = new Map<string, Buffer>();
  private clearing = false;

  constructor(private readonly level: number) {}

  segment(text: string): Buffer {
    const kept = this.thisTurn.get(text);
    if (kept) return kept;
    const segment = deflateRawSync(text, { ...SEGMENT_ZLIB, level: this.level });
    this.thisTurn.set(text, segment);
    if (!this.clearing) {
      this.clearing = true;
      setImmediate(() => {
        this.thisTurn.clear();
        this.clearing = false;
      });
    }
    return segment;
  }
}

/**
 * One gzip member around shared deflate segments: the header before the first, and at the end the last block with
 * the checksum and length of everything this stream sent, which are the stream's own.
 */
export class GzipFrames {
  private crc = 0;
  private size = 0;
  private started = false;

  constructor(private readonly deflate: SharedDeflate) {}

  frame(text: string): Buffer {
    this.crc = crc32(text, this.crc);
    this.size = (this.size + Buffer.byteLength(text)) >>> 0;
    const segment = this.deflate.segment(text);
    if (this.started) return segment;
    this.started = true;
    return Buffer.concat([GZIP_HEADER, segment]);
  }

  end(): Buffer {
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.size, 4);
    return Buffer.concat([this.started ? LAST_BLOCK : Buffer.concat([GZIP_HEADER, LAST_BLOCK]), trailer]);
  }
}
