import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { excerpt, resolveText, toJsonText, Verbatim } from './json-text.js';
import type { KeyPool } from './known-keys.js';
import { bearer } from '../support/tokens.js';

/** A generated request before its KnownKey placeholders are resolved. */
export interface RequestTemplate {
  readonly method: string;
  /** `/v1/products/{pKey}`; `{name}` is replaced by the percent-encoded (or Verbatim) `pathValues[name]`. */
  readonly path: string;
  readonly pathValues: Readonly<Record<string, unknown>>;
  readonly query: readonly (readonly [unknown, unknown])[];
  readonly headers: Readonly<Record<string, string>>;
  readonly body?:
    { kind: 'json'; value: unknown } | { kind: 'form'; fields: [unknown, unknown][] } | { kind: 'raw'; text: string };
  readonly token: 'valid' | 'missing' | 'garbage';
  /** Sent with Transfer-Encoding: chunked instead of Content-Length. */
  readonly chunked?: boolean;
}

/** What was actually sent, placeholders resolved: what assertions and failure reports use. */
export interface SentRequest {
  readonly method: string;
  /** The path as sent, without the query string. */
  readonly path: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

export interface ReceivedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** Size of the response head's header lines, to catch heads no ordinary client or proxy would read. */
  readonly headerBytes?: number;
}

/**
 * Percent-encodes what is not a legal request-target character (Node's parser answers those with a bare 400
 * before the app sees them); everything else of a Verbatim stays as written.
 */
function sendable(text: string): string {
  return text.replace(/[^\u0021-\u007e]|[#?]/gu, (character) => percentEncoded(character));
}

/** encodeURIComponent, except that a lone surrogate is sent as U+FFFD instead of throwing. */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-_.!~*'()]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

function urlPart(value: unknown, keys: KeyPool): string {
  return value instanceof Verbatim ? sendable(value.text) : percentEncoded(resolveText(value, keys));
}

export function materialize(template: RequestTemplate, keys: KeyPool): SentRequest {
  const path = template.path.replace(/\{(\w+)\}/g, (_whole, name: string) =>
    urlPart(template.pathValues[name] ?? '', keys),
  );
  const query = template.query.map(([name, value]) => `${urlPart(name, keys)}=${urlPart(value, keys)}`).join('&');
  const headers: Record<string, string> = {};
  // Node refuses to send control characters in a header value; the server could never see them either.
  for (const [name, value] of Object.entries(template.headers))
    headers[name] = value.replace(/[^\t\u0020-\u007e]/g, '?');
  if (template.token === 'valid') headers.Authorization = bearer();
  if (template.token === 'garbage') headers.Authorization = 'Bearer eyJhbGciOiJub25lIn0.e30.';
  let body: string | undefined;
  if (template.body?.kind === 'json') body = toJsonText(template.body.value, keys);
  if (template.body?.kind === 'raw') body = template.body.text;
  if (template.body?.kind === 'form') {
    body = template.body.fields.map(([name, value]) => `${urlPart(name, keys)}=${urlPart(value, keys)}`).join('&');
  }
  return { method: template.method, path, url: query === '' ? path : `${path}?${query}`, headers, body };
}

export function describeRequest(request: SentRequest): string {
  const headers = Object.entries(request.headers)
    .filter(([name]) => name !== 'Authorization')
    .map(([name, value]) => `${name}: ${excerpt(value, 120)}`);
  return [`${request.method} ${excerpt(request.url, 300)}`, ...headers, excerpt(request.body ?? '', 600)].join('\n');
}

/** A KnownKey, Verbatim or LabelledString: printed by its own toString. */
function isPlaceholder(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype !== Object.prototype && prototype !== null;
}

/** fast-check prints a template this way in its counterexample report. */
export function printable(template: RequestTemplate): RequestTemplate {
  const summary = (): string =>
    `${template.method} ${template.path} ${JSON.stringify(template.pathValues, (_key, value: unknown) => (isPlaceholder(value) ? String(value) : value))}` +
    ` query=${template.query.map(([name, value]) => `${String(name)}=${String(value)}`).join('&')}` +
    ` headers=${JSON.stringify(template.headers)} token=${template.token}` +
    (template.body ? ` body(${template.body.kind})=${excerpt(fc.stringify(template.body), 500)}` : '');
  return Object.assign(template, { [fc.toStringMethod]: summary });
}

export class FuzzClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

  private constructor(private readonly server: http.Server) {}

  /** Serves the app on a loopback port once: cheaper than supertest's server per request, and raw paths stay raw. */
  static async start(app: http.RequestListener): Promise<FuzzClient> {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FuzzClient(server);
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  send(request: SentRequest, chunked = false): Promise<ReceivedResponse> {
    const { port } = this.server.address() as AddressInfo;
    const payload = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
    const headers: Record<string, string> = { ...request.headers };
    if (payload && !chunked) headers['Content-Length'] = String(payload.length);
    if (payload && chunked) headers['Transfer-Encoding'] = 'chunked';
    return new Promise((resolve, reject) => {
      const outgoing = http.request(
        {
          host: '127.0.0.1',
          port,
          method: request.method,
          path: request.url,
          headers,
          agent: this.agent,
          // Read oversized heads anyway, so the contract check can name them instead of the parser failing.
          maxHeaderSize: 4 * 1024 * 1024,
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () =>
            resolve({
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              text: Buffer.concat(chunks).toString('utf8'),
              headerBytes: incoming.rawHeaders.reduce((sum, part) => sum + part.length + 2, 0),
            }),
          );
          incoming.on('error', reject);
        },
      );
      outgoing.setTimeout(30_000, () => outgoing.destroy(new Error('no response within 30 s')));
      outgoing.on('error', reject);
      if (payload && chunked) {
        const half = Math.floor(payload.length / 2);
        outgoing.write(payload.subarray(0, half));
        outgoing.end(payload.subarray(half));
      } else {
        outgoing.end(payload);
      }
    });
  }
}
