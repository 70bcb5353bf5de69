import compression from 'compression';
import type { RequestHandler } from 'express';

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
 * D33: gzip for answers over 1 KiB, streamed lists included: the list is compressed as its pages are written and
 * its back-pressure reaches the page reader, so nothing is held whole. D39: Server-Sent Events too (a stream has no
 * length, so the threshold never stops it); the stream flushes the compressor after each batch, so every event
 * reaches the browser when it is written, not when a block fills.
 */
export function compress(level: number): RequestHandler {
  const gzip = compression({
    threshold: THRESHOLD_BYTES,
    level,
    filter: (req, res) =>
      String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') || compression.filter(req, res),
  });
  return (req, res, next) => {
    const acceptEncoding = req.headers['accept-encoding'];
    if (acceptEncoding !== undefined) req.headers['accept-encoding'] = withoutBrotli(acceptEncoding);
    gzip(req, res, next);
  };
}
