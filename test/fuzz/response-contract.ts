import type { ReceivedResponse, SentRequest } from './fuzz-client.js';

/** D6: the two error formats' fields, in this order (a JSON Schema cannot say the order). */
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

/** What D6 says of an API-declined body beyond its schema: the order of its fields and their agreement. */
function apiDeclinedProblems(body: Record<string, unknown>, status: number, type: string): string[] {
  const keys = Object.keys(body);
  const problems: string[] = [];
  if (type !== 'application/hal+json') problems.push(`API-declined body in ${type || 'no content type'}`);
  if (!inOrder(keys, API_DECLINED_KEYS)) problems.push(`API-declined keys ${keys.join(',')} are not D6's`);
  if (body.httpStatus !== String(status)) problems.push(`httpStatus ${String(body.httpStatus)} is not "${status}"`);
  if (body.messageKey === '') problems.push('messageKey is empty');
  if (Array.isArray(body.obj) && body.obj.length === 0) problems.push('obj is empty');
  if ('class' in body && !('obj' in body)) problems.push('class without obj');
  return problems;
}

/** What D6 says of a server-declined body beyond its schema: exactly its fields, in order, agreeing with the request. */
function serverDeclinedProblems(
  body: Record<string, unknown>,
  status: number,
  type: string,
  request: SentRequest,
): string[] {
  const keys = Object.keys(body);
  const problems: string[] = [];
  if (type !== 'application/json') problems.push(`server-declined body in ${type || 'no content type'}`);
  if (keys.join(',') !== SERVER_DECLINED_KEYS.join(',')) problems.push(`server-declined keys ${keys.join(',')}`);
  if (body.status !== status) problems.push(`status ${String(body.status)} is not ${status}`);
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

/**
 * Whether an operation's error body is one it declares (or may come without a body) is the document's to say: the
 * response contract check (test/support/contract.ts) holds every answer to it. Here: what the schemas cannot say,
 * and that answers outside the operations (unknown paths and methods, which no document lists) are D6 errors too.
 */
function errorBodyProblems(request: SentRequest, response: ReceivedResponse): string[] {
  const type = mediaTypeOf(response);
  const body = parsed(response.text);
  if (!isRecord(body)) {
    return response.text === '' ? [] : [`error body is not a JSON object (${type || 'no content type'})`];
  }
  if ('httpStatus' in body) return apiDeclinedProblems(body, response.status, type);
  if ('exception' in body) return serverDeclinedProblems(body, response.status, type, request);
  // Spec part 7's refusal with only its message (the document says which operation gives it).
  const keys = Object.keys(body).join(',');
  return keys === 'message' ? [] : [`error body with keys ${keys} is neither of D6's formats`];
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
