import compression from 'compression';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
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
  const filter = (req: Request, res: Response): boolean => !isEventStream(res) && compression.filter(req, res);
  const gzip = compression({ threshold: THRESHOLD_BYTES, level, filter });
  return (req, res, next) => {
    const acceptEncoding = req.headers['accept-encoding'];
    if (acceptEncoding === undefined) {
      varyOnAcceptEncoding(req, res, filter);
      return next();
    }
    if (/br/i.test(acceptEncoding)) req.headers['accept-encoding'] = withoutBrotli(acceptEncoding);
    gzip(req, res, next);
  };
}

const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;

/**
 * A request without Accept-Encoding is never compressed (the compression middleware's `enforceEncoding` is
 * identity): of all it does, only its `Vary: Accept-Encoding` is left, added as it adds it (a type it would
 * compress, no `Cache-Control: no-transform`) when the headers are written. Saves wrapping write, end and on, a
 * close listener and their closures on every such request (issue 38 item 4: the bench's clients send none).
 */
function varyOnAcceptEncoding(
  req: Request,
  res: Response,
  compressible: (req: Request, res: Response) => boolean,
): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, statusCode: number, ...rest: unknown[]) {
    res.writeHead = writeHead;
    // Headers given to writeHead itself count, as on-headers (the middleware's hook) sets them first.
    const headers = rest.find((argument) => typeof argument === 'object' && argument !== null);
    if (headers !== undefined && !Array.isArray(headers)) {
      for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) {
        if (value !== undefined) this.setHeader(name, value);
      }
      rest = rest.filter((argument) => argument !== headers);
    }
    const cacheControl = this.getHeader('Cache-Control');
    if (compressible(req, this) && (!cacheControl || !NO_TRANSFORM.test(String(cacheControl))))
      this.vary('Accept-Encoding');
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
  } as Response['writeHead'];
}
