import http from 'node:http';

export interface TimedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly ms: number;
}

/** One request on a fresh connection, timed from the first byte sent to the last byte received. */
export function timedRequest(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: Buffer },
): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(
      url,
      {
        method: options.method,
        headers: {
          ...options.headers,
          ...(options.body ? { 'content-type': 'application/json', 'content-length': options.body.length } : {}),
        },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

export interface StreamedResponse {
  readonly status: number;
  readonly bytes: number;
  /** How often `marker` occurred in the body (counted across chunk boundaries). */
  readonly markers: number;
  readonly ms: number;
  readonly firstByte: string;
  readonly lastByte: string;
}

/** Reads a (large) response as fast as possible without keeping it: bytes, a marker count, the time. */
export function streamRequest(
  url: string,
  headers: Record<string, string>,
  marker: string,
  onProgress?: (bytes: number, markers: number) => void,
): Promise<StreamedResponse> {
  const needle = Buffer.from(marker);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { headers, agent: false }, (response) => {
      let bytes = 0;
      let markers = 0;
      let tail: Buffer = Buffer.alloc(0);
      let firstByte = '';
      let lastByte = '';
      response.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByte = String.fromCharCode(chunk[0] ?? 0);
        bytes += chunk.length;
        lastByte = String.fromCharCode(chunk[chunk.length - 1] ?? 0);
        const window = tail.length ? Buffer.concat([tail, chunk]) : chunk;
        for (let at = window.indexOf(needle); at !== -1; at = window.indexOf(needle, at + needle.length)) markers++;
        // Keep less than one marker's length, so a marker split across chunks is counted once.
        tail = window.subarray(Math.max(0, window.length - (needle.length - 1)));
        onProgress?.(bytes, markers);
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          bytes,
          markers,
          ms: performance.now() - started,
          firstByte,
          lastByte,
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}
