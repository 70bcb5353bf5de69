import type { ReceivedResponse, SentRequest } from './fuzz-client.js';

/** D6: the API-declined body, its fields in this order, each optional except message and httpStatus. */
const API_DECLINED_KEYS = ['message', 'messageKey', 'obj', 'httpStatus', 'class'];
const SERVER_DECLINED_KEYS = ['timestamp', 'status', 'error', 'exception', 'message', 'path'];

const MAX_READABLE_HEAD = 16 * 1024;

/** D6: the client's X-Request-Id is echoed when it is a sane one. */
const SANE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** What a client must never see; reported only when the request did not carry the text itself. */
const INTERNALS = [
  '    at ',
  'SELECT ',
  'INSERT ',
  'UPDATE ',
  'DELETE FROM',
  'relation "',
  'syntax error at',
  'node_modules',
];

function mediaTypeOf(response: ReceivedResponse): string {
  return String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function inOrder(keys: readonly string[], allowed: readonly string[]): boolean {
  let position = -1;
  return keys.every((key) => {
    const next = allowed.indexOf(key);
    const ordered = next > position;
    position = next;
    return ordered;
  });
}

function apiDeclinedProblems(body: Record<string, unknown>, status: number): string[] {
  const keys = Object.keys(body);
  const problems: string[] = [];
  if (!inOrder(keys, API_DECLINED_KEYS)) problems.push(`API-declined keys ${keys.join(',')} are not D6's`);
  if (typeof body.message !== 'string') problems.push('API-declined body without a string message');
  if (body.httpStatus !== String(status)) problems.push(`httpStatus ${String(body.httpStatus)} is not "${status}"`);
  if ('messageKey' in body && (typeof body.messageKey !== 'string' || body.messageKey === '')) {
    problems.push('messageKey is not a non-empty string');
  }
  if ('obj' in body && (!Array.isArray(body.obj) || body.obj.length === 0))
    problems.push('obj is not a non-empty array');
  if ('class' in body && (typeof body.class !== 'string' || !('obj' in body))) problems.push('class without obj');
  return problems;
}

function serverDeclinedProblems(body: Record<string, unknown>, status: number, request: SentRequest): string[] {
  const keys = Object.keys(body);
  const problems: string[] = [];
  if (keys.join(',') !== SERVER_DECLINED_KEYS.join(',')) problems.push(`server-declined keys ${keys.join(',')}`);
  if (typeof body.timestamp !== 'number') problems.push('timestamp is not a number');
  if (body.status !== status) problems.push(`status ${String(body.status)} is not ${status}`);
  for (const field of ['error', 'exception', 'message', 'path']) {
    if (typeof body[field] !== 'string') problems.push(`${field} is not a string`);
  }
  if (typeof body.path === 'string' && body.path.includes('?')) problems.push('path carries a query string');
  if (typeof body.path === 'string' && !samePath(body.path, request.path)) {
    problems.push(`path ${body.path} is not the request path ${request.path}`);
  }
  return problems;
}

/** The service re-escapes broken percent escapes (`%zz` → `%25zz`) before routing; both spellings name the path. */
function samePath(reported: string, sent: string): boolean {
  const repaired = sent
    .split('/')
    .map((segment) => (decodes(segment) ? segment : segment.replaceAll('%', '%25')))
    .join('/');
  return reported === sent || reported === repaired;
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** The two D6 formats, and the two bodies the spec prescribes besides them. */
function errorBodyProblems(request: SentRequest, response: ReceivedResponse): string[] {
  const type = mediaTypeOf(response);
  const body = parsed(response.text);
  // Express routes ignore one trailing slash.
  const path = request.path.length > 1 ? request.path.replace(/\/$/, '') : request.path;
  const isProductsFind = request.method === 'GET' && path === '/v1/products';
  if (response.status === 404 && response.text === '' && isProductsFind && /[?&]uom=/.test(request.url)) return [];
  const isProductDelete = request.method === 'DELETE' && /^\/v1\/products\/[^/]+$/.test(path);
  if (response.status === 403 && isProductDelete && isRecord(body) && type === 'application/hal+json') {
    const keys = Object.keys(body).join(',');
    return keys === 'message' && typeof body.message === 'string' ? [] : [`403 body keys ${keys}, expected message`];
  }
  if (!isRecord(body)) return [`error body is not a JSON object (${type || 'no content type'})`];
  if (type === 'application/hal+json') return apiDeclinedProblems(body, response.status);
  if (type === 'application/json') return serverDeclinedProblems(body, response.status, request);
  return [`error body in ${type || 'no content type'}`];
}

/** Every check a fuzzed response must pass; an empty list means it did. */
export function contractProblems(request: SentRequest, response: ReceivedResponse): string[] {
  const problems: string[] = [];
  if (response.status >= 500 || response.status < 100) problems.push(`status ${response.status}`);
  if (!response.headers['x-request-id']) problems.push('no X-Request-Id');
  const offered = request.headers['X-Request-Id'];
  if (offered !== undefined && SANE_REQUEST_ID.test(offered) && response.headers['x-request-id'] !== offered) {
    problems.push(`X-Request-Id ${offered} not echoed`);
  }
  if (response.status === 401 && !String(response.headers['www-authenticate'] ?? '').startsWith('Bearer')) {
    problems.push('401 without WWW-Authenticate: Bearer');
  }
  if (response.status === 405 && !response.headers.allow) problems.push('405 without Allow');
  if ((response.headerBytes ?? 0) > MAX_READABLE_HEAD) {
    problems.push(
      `response headers of ${response.headerBytes} bytes: beyond the 16 kB that Node and common proxies read`,
    );
  }
  if (response.status >= 400 && request.method !== 'HEAD') problems.push(...errorBodyProblems(request, response));
  const sent = `${request.url}\n${request.body ?? ''}`;
  for (const marker of INTERNALS) {
    if (response.text.includes(marker) && !sent.includes(marker)) problems.push(`body shows internals: "${marker}"`);
  }
  const type = mediaTypeOf(response);
  if (response.status < 300 && /json$/.test(type) && response.text !== '' && parsed(response.text) === undefined) {
    problems.push(`${type} body is not JSON`);
  }
  return problems;
}
