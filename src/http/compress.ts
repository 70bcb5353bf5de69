import compression from 'compression';
import type { ServerResponse } from 'node:http';
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

function isEventStream(res: ServerResponse): boolean {
  return String(res.getHeader('Content-Type') ?? '').startsWith(EVENT_STREAM);
}

/**
 * D33: gzip for answers over 1 KiB, streamed lists included: the list is compressed as its pages are written and
 * its back-pressure reaches the page reader, so nothing is held whole. Server-Sent Events are left to their stream,
 * which compresses each batch once for all streams (D39, src/http/gzip-frames.ts).
 */
export function compress(level: number): RequestHandler {
  const gzip = compression({
    threshold: THRESHOLD_BYTES,
    level,
    filter: (req, res) => !isEventStream(res) && compression.filter(req, res),
  });
  return (req, res, next) => {
    const acceptEncoding = req.headers['accept-encoding'];
    if (acceptEncoding !== undefined && /br/i.test(acceptEncoding))
      req.headers['accept-encoding'] = withoutBrotli(acceptEncoding);
    gzip(req, res, next);
  };
}
