import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

/**
 * Requests Node's HTTP parser refuses before the app sees them (invalid bytes, oversized headers, a header
 * timeout) still get the server-declined body of D6 and a request id, instead of a bare status line.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const [status, reason, exception, message] = timedOut
      ? [408, 'Request Timeout', 'RequestTimeoutException', 'The request did not arrive in time']
      : tooLarge
        ? [431, 'Request Header Fields Too Large', 'HeaderTooLargeException', 'The request headers are too large']
        : [400, 'Bad Request', 'HttpMessageNotReadableException', 'The request is not valid HTTP'];
    const requestId = randomUUID();
    const body = JSON.stringify({ timestamp: Date.now(), status, error: reason, exception, message, path: '' });
    logger.info({ requestId, code: error.code, status }, 'refused a request the HTTP parser could not read');
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
