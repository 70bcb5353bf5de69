import type { Request } from 'express';
import { Transform, type Readable } from 'node:stream';
import { MIMEType, TextDecoder } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { ByteSize } from '../config.js';
import { payloadTooLarge, ServerError, unreadableBody } from './server-error.js';
import { UploadPace, type PaceBounds } from './upload-pace.js';

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

/** Holds up to `bytes` of the body ahead of its reader; `onBytes` sees each piece as it arrived (a hash of it). */
function readAhead(bytes: number, onBytes?: (chunk: Buffer) => void): Transform {
  return new Transform({
    readableHighWaterMark: bytes,
    transform(chunk: Buffer, _encoding, done) {
      onBytes?.(chunk);
      done(null, chunk);
    },
  });
}

/**
 * The body's charset and encoding, checked before a byte is read: an unknown one is refused, the body read off.
 * `readAheadBytes` reads that much of the body ahead of its reader (see READ_AHEAD_BYTES).
 */
function openBody(req: Request, readAheadBytes = 0, onBytes?: (chunk: Buffer) => void): OpenBody {
  let decoder: TextDecoder;
  let inflate: Transform | undefined;
  try {
    decoder = decoderFor(req);
    inflate = decompressor(req);
  } catch (error) {
    req.resume();
    throw error;
  }
  const ahead = readAheadBytes > 0 ? req.pipe(readAhead(readAheadBytes, onBytes)) : undefined;
  const raw = ahead ?? req;
  return {
    decoder,
    source: inflate ? raw.pipe(inflate) : raw,
    close: () => {
      if (ahead) {
        req.unpipe(ahead);
        ahead.destroy();
      }
      if (inflate) {
        raw.unpipe(inflate);
        inflate.on('error', () => undefined).destroy();
      }
      req.resume();
    },
  };
}

/**
 * Reads a body as text, decoded piece by piece as it arrives (see readPieces), so its bytes are never held whole;
 * `onPiece` sees each piece, so a hash of the body needs no copy of it. Bytes that are no character in the charset
 * (once stored as U+FFFD) are a 400; beyond `limit`, counted after decompression, a 413. On a refusal the rest of
 * the body is read off unkept, so the answer reaches a client that is still sending.
 */
export async function readText(req: Request, limit: ByteSize, onPiece?: (piece: string) => void): Promise<string> {
  let text = '';
  for await (const piece of readPieces(req, limit, onPiece)) text += piece;
  return text;
}

/**
 * Reads a body piece by piece as it arrives, decompressed and strictly decoded as readText does, and yields each
 * decoded piece: only the piece being handled is held, and the socket is read only as fast as the caller takes
 * pieces (a JSON bulk, issue 26). Beyond `limit` in total a 413; bytes that are no character a 400. `onPiece` sees
 * each piece (an idempotency hash). When the caller stops early the rest of the body is read off unkept, so the
 * answer reaches a client still sending.
 */
export async function* readPieces(
  req: Request,
  limit: ByteSize,
  onPiece?: (piece: string) => void,
): AsyncGenerator<string> {
  const body = openBody(req);
  const { decoder, source } = body;
  let size = 0;
  const decode = (chunk?: Buffer): string => {
    let text: string;
    try {
      text = chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw unreadableBody(`the body is not valid ${decoder.encoding}`);
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
    lingerUntilRead(req);
    body.close();
  }
}

/**
 * Issue 39: a body refused before it ended is read off to its end before the connection may close. Closing it with
 * bytes unread would make the client's system answer with a reset, which can discard the answer before the client
 * reads it; so the connection is kept as for a next request (the client, having asked to close, closes it).
 */
function lingerUntilRead(req: Request): void {
  if (!req.complete && req.res && !req.res.headersSent) req.res.shouldKeepAlive = true;
}

/** One line of a streamed body: its number (from 1) and its text without the line break. */
export interface BodyLine {
  readonly number: number;
  readonly text: string;
}

/** What bounds a streamed body besides its size: every one of them ends the body with a clear error. */
export interface LineBounds {
  /** The whole body, counted after decompression. */
  readonly limit: ByteSize;
  /** One line, counted in characters (never more than its bytes). */
  readonly lineLimit: ByteSize;
  /** How fast the client must send (IMPORT_STALL_TIMEOUT_MS, IMPORT_MIN_BYTES_PER_SECOND, D38). */
  readonly pace: PaceBounds;
  /** Sees the body's bytes as they arrived, compressed when sent so (an Idempotency-Key's hash, D38). */
  readonly onBytes?: (chunk: Buffer) => void;
  /** When the whole body must have been read (ms since the epoch), and the setting that says so. */
  readonly deadline: { readonly at: number; readonly ms: number };
}

/**
 * Blank lines send nothing onwards, so a body of nothing else (a gigabyte of them from a megabyte of gzip) would
 * keep an import's COPY waiting for data for as long as it takes to read them (issue 26). A few separate records.
 */
export const MAX_BLANK_LINES_IN_A_ROW = 1000;

// Connection: close: the client may still be sending, and nothing of the rest would be read.
const timedOut = (message: string): ServerError =>
  new ServerError(408, 'RequestTimeoutException', message, { Connection: 'close' });

/** Tomcat's (and so Spring's) name for a client that left mid-request; only the log sees the answer. */
export const clientGone = (): ServerError =>
  new ServerError(400, 'ClientAbortException', 'The client closed the connection before the body ended');

const isBlank = (text: string, start: number, end: number): boolean => {
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0d) return text.slice(start, end).trim() === '';
  }
  return true;
};

/**
 * The body's next piece of bytes, decompressed, or null at its end. Rejects when the client is too slow (see
 * UploadPace), when the deadline passes, and when the client goes away before the body ended (a gzip body's
 * decompressor would otherwise wait for it for ever). Listeners are added only while waiting and removed after,
 * so a refusal leaves the request free to be read off.
 */
function nextPiece(req: Request, source: Readable, bounds: LineBounds, pace: UploadPace): Promise<Buffer | null> {
  if (Date.now() >= bounds.deadline.at) return Promise.reject(pastDeadline(bounds));
  if (req.destroyed && !req.complete) return Promise.reject(clientGone());
  const ready = source.read() as Buffer | null;
  if (ready !== null) {
    pace.ahead();
    return Promise.resolve(ready);
  }
  if (source.readableEnded) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout;
    const check = (): void => {
      const now = Date.now();
      const slow = now >= bounds.deadline.at ? undefined : pace.slow(now);
      if (now >= bounds.deadline.at || slow !== undefined) {
        settle();
        reject(slow === undefined ? pastDeadline(bounds) : timedOut(slow));
        return;
      }
      timer = setTimeout(check, Math.min(pace.nextCheckInMs(now), bounds.deadline.at - now));
    };
    const onReadable = (): void => {
      const piece = source.read() as Buffer | null;
      if (piece === null) return;
      settle();
      resolve(piece);
    };
    const onEnd = (): void => {
      settle();
      resolve(null);
    };
    const onError = (error: Error): void => {
      settle();
      reject(req.complete ? unreadableBody(error.message || 'the body could not be read') : clientGone());
    };
    const onClose = (): void => {
      if (req.complete) return;
      settle();
      reject(clientGone());
    };
    function settle(): void {
      clearTimeout(timer);
      source.off('readable', onReadable).off('end', onEnd).off('error', onError);
      req.off('close', onClose);
    }
    source.on('readable', onReadable).on('end', onEnd).on('error', onError);
    req.on('close', onClose);
    check();
  });
}

const pastDeadline = (bounds: LineBounds): ServerError =>
  timedOut(`The body did not arrive within ${bounds.deadline.ms} ms (HTTP_REQUEST_TIMEOUT_MS)`);

/**
 * How much of a streamed body is read ahead of its lines. A client's going away (its FIN) reaches the service only
 * once everything it sent before has been read off the socket; the lines are handled more slowly than a fast client
 * sends them, so without this the megabytes in the kernel's buffers would first be parsed and copied (seconds) before
 * the departure is heard and the import rolled back (D38). A few times the socket buffers; held only while a body is
 * ahead of its import.
 */
const READ_AHEAD_BYTES = 16 * 1024 * 1024;

/** The longest the lines of a body are handled without letting the event loop run. */
const SLICE_MS = 20;

/**
 * Reads a body line by line as it arrives (NDJSON), decompressed and strictly decoded as readText does: only the
 * line being read is held, and the socket is read only as fast as the caller takes lines, so a body may be far
 * larger than memory. Blank lines are counted but not yielded. Beyond `limit` in total a 413; a line longer than
 * `lineLimit` a 413 naming it; more than MAX_BLANK_LINES_IN_A_ROW blank lines a 400 naming the line; a client that
 * stalls or passes the deadline a 408 (see nextPiece). When the caller stops early the rest of the body is read
 * off unkept, so the answer reaches a client still sending.
 */
export async function* readLines(req: Request, bounds: LineBounds): AsyncGenerator<BodyLine> {
  const { limit, lineLimit } = bounds;
  const pace = new UploadPace(bounds.pace);
  const body = openBody(req, READ_AHEAD_BYTES, (chunk) => {
    pace.arrived(chunk.length);
    bounds.onBytes?.(chunk);
  });
  const { decoder, source } = body;
  // An error while no piece is awaited (the client leaving between two) is heard by the next wait.
  source.on('error', () => undefined);
  let size = 0;
  let pending = '';
  let number = 0;
  let blankInARow = 0;
  let sliceStarted = performance.now();
  const decode = (chunk?: Buffer): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw unreadableBody(`line ${number + 1}: the body is not valid ${decoder.encoding}`);
    }
  };
  const tooLong = (): ServerError =>
    new ServerError(
      413,
      'PayloadTooLargeException',
      `Request body line ${number + 1} exceeds the limit of one resource, ${lineLimit.text}`,
    );
  function* line(start: number, end: number): Generator<BodyLine> {
    number++;
    if (isBlank(pending, start, end)) {
      if (++blankInARow > MAX_BLANK_LINES_IN_A_ROW) {
        throw unreadableBody(`line ${number}: more than ${MAX_BLANK_LINES_IN_A_ROW} blank lines in a row`);
      }
      return;
    }
    blankInARow = 0;
    yield { number, text: pending.slice(start, pending.charCodeAt(end - 1) === 0x0d ? end - 1 : end) };
  }
  function* split(text: string): Generator<BodyLine> {
    pending += text;
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      if (end - start > lineLimit.bytes) throw tooLong();
      yield* line(start, end);
      start = end + 1;
    }
    pending = pending.slice(start);
    if (pending.length > lineLimit.bytes) throw tooLong();
  }
  try {
    for (
      let chunk = await nextPiece(req, source, bounds, pace);
      chunk !== null;
      chunk = await nextPiece(req, source, bounds, pace)
    ) {
      size += chunk.length;
      if (size > limit.bytes) throw payloadTooLarge(limit.text);
      for (const each of split(decode(chunk))) {
        yield each;
        // A piece read ahead can hold megabytes of lines, all at hand: between slices the event loop hears the
        // socket (a client leaving, the next bytes) and the other requests.
        if (performance.now() - sliceStarted >= SLICE_MS) {
          await new Promise(setImmediate);
          sliceStarted = performance.now();
        }
      }
    }
    yield* split(decode());
    if (pending !== '') yield* line(0, pending.length);
  } catch (error) {
    if (error instanceof ServerError) throw error;
    throw unreadableBody((error as Error).message || 'the body could not be read');
  } finally {
    body.close();
  }
}
