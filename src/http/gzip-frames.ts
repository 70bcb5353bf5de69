import { constants, crc32, deflateRawSync } from 'node:zlib';
import { crc32Combine, crc32Shift } from './crc32-combine.js';
import { ThisTurn } from './this-turn.js';

/** A gzip member's header: deflate, no name, no time, unknown system (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty last block of fixed codes: ends the deflate data. */
const LAST_BLOCK = Buffer.from([0x03, 0x00]);
/** Small state per call: a batch is a few KB, and every call starts its own window anyway. */
const SEGMENT_ZLIB = { windowBits: 12, memLevel: 5, finishFlush: constants.Z_SYNC_FLUSH } as const;

/** A text as every stream that sends it writes it, and what each stream's trailer needs of it: taken once. */
export interface Segment {
  readonly deflated: Buffer;
  readonly crc: number;
  /** Its length in bytes (UTF-8). */
  readonly length: number;
  /** What extends a stream's CRC over the text (crc32Shift). */
  readonly crcShift: number;
}

/**
 * D39: a text compressed once for every event stream that sends it. Each text becomes deflate blocks of its own,
 * ending on a byte boundary (a sync flush, no last block) and referring to nothing before it, so the same bytes are
 * valid in any stream whatever it sent before. The streams caught up with the feed write the same batch on the same
 * pulse, so a thousand of them cost one compression instead of a thousand zlib calls through the threadpool
 * (scenario 18, bench/notes.md). Its bytes, their CRC and length are taken once too: each stream only extends its
 * own CRC (issue 33: encoding, CRC and length of the batch per stream were a fifth of what 1,000 streams cost). The
 * streams of a batch share its one string, so finding its segment is no comparison of texts. What was compressed is
 * kept until the event loop's next turn.
 */
export class SharedDeflate {
  private readonly thisTurn = new ThisTurn<Segment>();

  constructor(private readonly level: number) {}

  segment(text: string): Segment {
    return this.thisTurn.get(text, () => {
      const bytes = Buffer.from(text);
      return {
        deflated: deflateRawSync(bytes, { ...SEGMENT_ZLIB, level: this.level }),
        crc: crc32(bytes),
        length: bytes.length,
        crcShift: crc32Shift(bytes.length),
      };
    });
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
    const segment = this.deflate.segment(text);
    this.crc = crc32Combine(this.crc, segment.crc, segment.crcShift);
    this.size = (this.size + segment.length) >>> 0;
    if (this.started) return segment.deflated;
    this.started = true;
    return Buffer.concat([GZIP_HEADER, segment.deflated]);
  }

  end(): Buffer {
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.size, 4);
    return Buffer.concat([this.started ? LAST_BLOCK : Buffer.concat([GZIP_HEADER, LAST_BLOCK]), trailer]);
  }
}
