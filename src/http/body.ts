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

interface OpenBody {
  readonly decoder: TextDecoder;
  /** The body's bytes, decompressed when it is sent compressed. */
  readonly source: Readable;
  /** Stops decompressing and reads off whatever is left unkept, so the answer reaches a client still sending. */
  close(): void;
}

/** The body's charset and encoding, checked before a byte is read: an unknown one is refused, the body read off. */
function openBody(req: Request): OpenBody {
  let decoder: TextDecoder;
  let inflate: Transform | undefined;
  try {
    decoder = decoderFor(req);
    inflate = decompressor(req);
  } catch (error) {
    req.resume();
    throw error;
  }
  return {
    decoder,
    source: inflate ? req.pipe(inflate) : req,
    close: () => {
      if (inflate) {
        req.unpipe(inflate);
        inflate.on('error', () => undefined).destroy();
      }
      req.resume();
    },
  };
}

/**
 * Reads a body as text, decoded piece by piece as it arrives, so its bytes are never held whole; `onPiece` sees
 * each piece, so a hash of the body needs no copy of it. Bytes that are no character in the charset (once stored
 * as U+FFFD) are a 400; beyond `limit`, counted after decompression, a 413. On a refusal the rest of the body is
 * read off unkept, so the answer reaches a client that is still sending.
 */
export function readText(req: Request, limit: ByteSize, onPiece?: (piece: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let body: OpenBody;
    try {
      body = openBody(req);
    } catch (error) {
      return reject(error);
    }
    const { decoder, source } = body;
    let size = 0;
    let text = '';
    const add = (piece: string): void => {
      onPiece?.(piece);
      text += piece;
    };
    const finish = (error?: unknown): void => {
      source.off('data', onData).off('end', onEnd).off('error', onError);
      body.close();
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

/**
 * Reads a body piece by piece as it arrives, decompressed and strictly decoded as readText does, and yields each
 * decoded piece: only the piece being handled is held, and the socket is read only as fast as the caller takes
 * pieces. Beyond `limit` in total a 413; bytes that are no character a 400, its text after `where()` (what the
 * caller was reading). `onPiece` sees each piece (an idempotency hash). When the caller stops early the rest of the
 * body is read off unkept, so the answer reaches a client still sending.
 */
export async function* readPieces(
  req: Request,
  limit: ByteSize,
  onPiece?: (piece: string) => void,
  where: () => string = () => '',
): AsyncGenerator<string> {
  const body = openBody(req);
  const { decoder, source } = body;
  let size = 0;
  const decode = (chunk?: Buffer): string => {
    let text: string;
    try {
      text = chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw unreadableBody(`${where()}the body is not valid ${decoder.encoding}`);
    }
    onPiece?.(text);
    return text;
  };
  try {
    for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit.bytes) throw payloadTooLarge(limit.text);
      yield decode(chunk);
    }
    yield decode();
  } catch (error) {
    if (error instanceof ServerError) throw error;
    throw unreadableBody((error as Error).message || 'the body could not be read');
  } finally {
    body.close();
  }
}

/** One line of a streamed body: its number (from 1) and its text without the line break. */
export interface BodyLine {
  readonly number: number;
  readonly text: string;
}

/**
 * Reads a body line by line as it arrives (NDJSON), as readPieces does: only the line being read is held, so a body
 * may be far larger than memory. A line longer than `lineLimit` (counted in characters, which are never more than
 * its bytes) is a 413 naming it.
 */
export async function* readLines(
  req: Request,
  limit: ByteSize,
  lineLimit: ByteSize,
  onPiece?: (piece: string) => void,
): AsyncGenerator<BodyLine> {
  let pending = '';
  let number = 0;
  const tooLong = (): ServerError =>
    new ServerError(
      413,
      'PayloadTooLargeException',
      `Request body line ${number + 1} exceeds the limit of one resource, ${lineLimit.text}`,
    );
  for await (const text of readPieces(req, limit, onPiece, () => `line ${number + 1}: `)) {
    pending += text;
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      if (end - start > lineLimit.bytes) throw tooLong();
      number++;
      yield { number, text: pending.slice(start, pending.charCodeAt(end - 1) === 0x0d ? end - 1 : end) };
      start = end + 1;
    }
    pending = pending.slice(start);
    if (pending.length > lineLimit.bytes) throw tooLong();
  }
  if (pending !== '') yield { number: number + 1, text: pending };
}
