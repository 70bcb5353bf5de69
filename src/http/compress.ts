import compression from 'compression';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants } from 'node:zlib';
import type { RequestHandler } from 'express';
import { EVENT_STREAM } from './media-types.js';

/** D33: smaller answers are sent as they are; below a packet or two, compressing saves nothing worth its CPU. */
const THRESHOLD_BYTES = 1024;

/**
 * Brotli is left out: on the streamed product list (scenario 5, bench/notes.md) it sent 15 % fewer bytes than gzip
 * at level 1 for a quarter more CPU, and CPU is what bounds an instance. The compression middleware prefers br
 * whenever a client offers it, as every browser does, so br is taken out of what it sees.
 */
function withoutBrotli(acceptEncoding: string): string {
  return acceptEncoding
    .split(',')
    .filter((coding) => coding.split(';')[0]!.trim().toLowerCase() !== 'br')
    .join(',');
}

/**
 * D39: an event stream keeps its compressor for as long as it is open, a thousand of them at once. zlib's defaults
 * (a 32 KiB window, memLevel 8) allocate about 256 KB per stream; a 4 KiB window and memLevel 5 about 32 KB. A
 * batch of events is a few KB, flushed whole: 400 unit events flushed three at a time compressed to the same bytes
 * with both. Every write is a batch and is flushed with it (Z_SYNC_FLUSH): one zlib call per batch, where a write
 * and a res.flush() took two trips through the threadpool for each batch of each stream.
 */
const EVENT_STREAM_ZLIB = { windowBits: 12, memLevel: 5, flush: constants.Z_SYNC_FLUSH } as const;

function namesEventStream(req: IncomingMessage): boolean {
  return req.headers.accept?.toLowerCase().includes(EVENT_STREAM) === true;
}

function isEventStream(res: ServerResponse): boolean {
  return String(res.getHeader('Content-Type') ?? '').startsWith(EVENT_STREAM);
}

/**
 * D33: gzip for answers over 1 KiB, streamed lists included: the list is compressed as its pages are written and
 * its back-pressure reaches the page reader, so nothing is held whole. D39: Server-Sent Events too (a stream has no
 * length, so the threshold never stops it), with a compressor of their own that flushes every write, so every
 * batch of events reaches the browser when it is written, not when a block fills.
 */
export function compress(level: number): RequestHandler {
  const gzipStream = compression({
    threshold: THRESHOLD_BYTES,
    level,
    ...EVENT_STREAM_ZLIB,
    filter: (_req, res) => isEventStream(res),
  });
  const gzip = compression({
    threshold: THRESHOLD_BYTES,
    level,
    filter: (req, res) => !isEventStream(res) && compression.filter(req, res),
  });
  return (req, res, next) => {
    const acceptEncoding = req.headers['accept-encoding'];
    if (acceptEncoding !== undefined && /br/i.test(acceptEncoding))
      req.headers['accept-encoding'] = withoutBrotli(acceptEncoding);
    // Each compressor wraps the response (four closures, a listener, writeHead) on every request, so the event
    // stream's is added only where an event stream can be answered: its type is chosen only when Accept names it
    // (D33).
    if (!namesEventStream(req)) return gzip(req, res, next);
    gzip(req, res, (error?: unknown) => (error ? next(error) : gzipStream(req, res, next)));
  };
}
