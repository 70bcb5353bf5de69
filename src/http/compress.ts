import compression from 'compression';
import type { RequestHandler } from 'express';

/** D33: smaller answers are sent as they are; below a packet or two, compressing saves nothing worth its CPU. */
const THRESHOLD_BYTES = 1024;

/**
 * zlib's level 1: measured on scenario 5 (bench/notes.md, issue 27) it shrinks product JSON nearly as much as the
 * default level 6 for a fraction of its CPU, which on a 2-core instance is what bounds throughput.
 */
export const GZIP_LEVEL = 1;

/**
 * D33: gzip (or br, when a client prefers it) for answers over 1 KiB, streamed lists included: the list is
 * compressed as its pages are written and its back-pressure reaches the page reader, so nothing is held whole.
 * Server-Sent Events are left alone: each event must reach the browser when it is written, not when a block fills.
 */
export function compress(): RequestHandler {
  return compression({
    threshold: THRESHOLD_BYTES,
    level: GZIP_LEVEL,
    filter: (req, res) =>
      !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') && compression.filter(req, res),
  });
}
