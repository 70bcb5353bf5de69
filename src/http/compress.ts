import compression from 'compression';
import type { RequestHandler } from 'express';

/** D33: smaller answers are sent as they are; below a packet or two, compressing saves nothing worth its CPU. */
const THRESHOLD_BYTES = 1024;

/**
 * D33: gzip (or br, when a client prefers it) for answers over 1 KiB, streamed lists included: the list is
 * compressed as its pages are written and its back-pressure reaches the page reader, so nothing is held whole.
 * Server-Sent Events are left alone: each event must reach the browser when it is written, not when a block fills.
 */
export function compress(level: number): RequestHandler {
  return compression({
    threshold: THRESHOLD_BYTES,
    level,
    filter: (req, res) =>
      !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') && compression.filter(req, res),
  });
}
