import type { Request, Response } from 'express';
import type { Readable, Transform } from 'node:stream';
import { MIMEType, TextDecoder } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { ByteSize } from '../config.js';
import { payloadTooLarge, ServerError, unreadableBody } from './server-error.js';

/** The declared length of an uncompressed body; undefined when it is chunked or compressed (known only once read). */
export function declaredLength(req: Request): number | undefined {
  const encoding = req.headers['content-encoding']?.toLowerCase() ?? 'identity';
  const length = req.headers['content-length'];
  return encoding === 'identity' && length !== undefined ? Number(length) : undefined;
}

/** What decompresses the body as Content-Encoding says; undefined when it is not compressed. */
function decompressor(req: Request): Transform | undefined {
  const encoding = req.headers['content-encoding']?.toLowerCase() ?? 'identity';
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      throw unreadableBody(`unsupported content encoding "${encoding}"`);
  }
}

/** A strict decoder for the declared charset (UTF-8 unless named): bytes that are no character are refused. */
function decoderFor(req: Request): TextDecoder {
  let charset = 'utf-8';
  try {
    charset = new MIMEType(req.headers['content-type'] ?? '').params.get('charset') ?? charset;
    return new TextDecoder(charset, { fatal: true });
  } catch {
    throw unreadableBody(`unsupported charset "${charset.toUpperCase()}"`);
  }
}

/**
 * Reads a body as text, decoded piece by piece as it arrives, so its bytes are never held whole; `onPiece` sees
 * each piece, so a hash of the body needs no copy of it. Bytes that are no character in the charset (once stored
 * as U+FFFD) are a 400; beyond `limit`, counted after decompression, a 413. On a refusal the rest of the body is
 * read off unkept, so the answer reaches a client that is still sending.
 */
export function readText(req: Request, limit: ByteSize, onPiece?: (piece: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let decoder: TextDecoder;
    let inflate: Transform | undefined;
    try {
      decoder = decoderFor(req);
      inflate = decompressor(req);
    } catch (error) {
      req.resume();
      return reject(error);
    }
    const source: Readable = inflate ? req.pipe(inflate) : req;
    let size = 0;
    let text = '';
    const add = (piece: string): void => {
      onPiece?.(piece);
      text += piece;
    };
    const finish = (error?: unknown): void => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      if (inflate) {
        req.unpipe(inflate);
        inflate.on('error', () => undefined).destroy();
      }
      req.resume();
      if (error) reject(error);
      else resolve(text);
    };
    const decode = (chunk?: Buffer): boolean => {
      try {
        add(chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode());
        return true;
      } catch {
        finish(unreadableBody(`the body is not valid ${decoder.encoding}`));
        return false;
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit.bytes) finish(payloadTooLarge(limit.text));
      else decode(chunk);
    };
    const onEnd = (): void => {
      if (decode()) finish();
    };
    const onError = (error: Error): void => finish(unreadableBody(error.message || 'the body could not be read'));
    source.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

interface Waiting {
  readonly size: number;
  readonly admit: () => void;
}

const budgetExhausted = (): ServerError =>
  new ServerError(503, 'TooManyLargeBodiesException', 'Too many large request bodies are being handled; retry later', {
    'Retry-After': '5',
  });

/**
 * The bodies being read and handled at once add up to at most `capacity` bytes, each counted at its declared
 * length or, unknown, at its limit; a request that would go beyond waits, in arrival order, before its body is
 * read. What a body costs lasts until its answer is sent: the parsed values live that long, at many times the
 * body's size, so ten bulk bodies at once would otherwise hold ten of those (issue 15).
 */
export class BodyBudget {
  private used = 0;
  private readonly waiting: Waiting[] = [];

  /**
   * `maxWaitMs` bounds the wait for a turn: a client holding the budget (a slow upload) then delays the others by a
   * clear 503 to retry, not by minutes of silence.
   */
  constructor(
    private readonly capacity: number,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Resolves once the request may read its body, or rejects with a 503 after waiting `maxWaitMs`; the share is given
   * back when the response closes.
   */
  take(size: number, res: Response): Promise<void> {
    return new Promise((resolve, reject) => {
      let admitted = false;
      const giveUp = setTimeout(() => {
        this.leave(entry);
        reject(budgetExhausted());
      }, this.maxWaitMs);
      const entry: Waiting = {
        size,
        admit: () => {
          clearTimeout(giveUp);
          admitted = true;
          this.used += size;
          resolve();
        },
      };
      res.once('close', () => {
        clearTimeout(giveUp);
        if (admitted) {
          this.used -= size;
          this.admitWaiting();
        } else {
          // The client left while waiting.
          this.leave(entry);
        }
      });
      this.waiting.push(entry);
      this.admitWaiting();
    });
  }

  private leave(entry: Waiting): void {
    const index = this.waiting.indexOf(entry);
    if (index >= 0) this.waiting.splice(index, 1);
    this.admitWaiting();
  }

  private admitWaiting(): void {
    for (;;) {
      const next = this.waiting[0];
      // The first always goes when nothing else runs, so no body can wait forever.
      if (!next || (this.used > 0 && this.used + next.size > this.capacity)) return;
      this.waiting.shift();
      next.admit();
    }
  }
}
