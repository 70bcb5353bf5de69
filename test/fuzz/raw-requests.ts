import fc from 'fast-check';
import type { ApiDocument, Operation } from './api-document.js';
import { evilKey, evilSegment, evilShortString } from './evil-values.js';
import { printable, type RequestTemplate } from './fuzz-client.js';
import { Verbatim } from './json-text.js';
import { ACCEPT_HEADERS, JSON_CONTENT_TYPES, operationRequest, token } from './operation-requests.js';

/** Requests that leave the documented operations: other methods, mangled paths, odd headers and bodies. */

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

const CONTENT_TYPES: readonly string[] = [
  ...JSON_CONTENT_TYPES,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'APPLICATION/JSON',
  'application/json, text/plain',
  '*/*',
  'application/',
  ';',
  '',
];

const CONTENT_ENCODINGS = ['gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, gzip'];

/** A documented path with one literal part bent: doubled or trailing slashes, case, escapes, dot segments. */
function bentPath(path: string): fc.Arbitrary<string> {
  const segments = path.split('/').filter((segment) => segment !== '');
  return fc.tuple(fc.nat(), fc.constantFrom(...BENDS)).map(([pick, bend]) => {
    const index = pick % Math.max(segments.length, 1);
    return `/${bend(segments, index).join('/')}`;
  });
}

type Bend = (segments: string[], index: number) => string[];

const BENDS: readonly Bend[] = [
  (segments) => [...segments, ''],
  (segments, index) => segments.map((segment, at) => (at === index ? `/${segment}` : segment)),
  (segments, index) => segments.map((segment, at) => (at === index ? segment.toUpperCase() : segment)),
  (segments, index) =>
    segments.map((segment, at) =>
      at === index ? `%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}` : segment,
    ),
  (segments, index) => [...segments.slice(0, index), '..', ...segments.slice(index)],
  (segments, index) => [...segments.slice(0, index), '.', ...segments.slice(index)],
  (segments, index) => [...segments.slice(0, index + 1), 'extra', ...segments.slice(index + 1)],
  (segments, index) => segments.slice(0, index),
  (segments, index) => segments.map((segment, at) => (at === index ? `${segment};x=1` : segment)),
];

/** Any operation's request, but with another method or a bent path (unknown routes: 404; known ones: 405). */
export function strayRequest(document: ApiDocument, operations: readonly Operation[]): fc.Arbitrary<RequestTemplate> {
  return fc
    .tuple(fc.constantFrom(...operations), fc.constantFrom(...METHODS), fc.boolean())
    .chain(([operation, method, bend]) =>
      fc
        .tuple(operationRequest(document, operation), bend ? bentPath(operation.path) : fc.constant(operation.path))
        .map(([template, path]) => printable({ ...template, method, path })),
    );
}

const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom(
    '',
    ' ',
    '\uFEFF[]',
    '[]',
    '{}',
    'null',
    '{"a":1}{"b":2}',
    '[1,2',
    'a=1&b=2',
    '<x/>',
    '\u0000',
    'true',
  ),
);

/** A documented operation sent with a random Content-Type, Content-Encoding and raw body. */
export function oddBodyRequest(document: ApiDocument, operations: readonly Operation[]): fc.Arbitrary<RequestTemplate> {
  return fc
    .tuple(
      fc.constantFrom(...operations),
      fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 8, nil: undefined }),
      fc.option(fc.constantFrom(...CONTENT_ENCODINGS), { freq: 3, nil: undefined }),
      rawBody,
    )
    .chain(([operation, contentType, encoding, text]) =>
      operationRequest(document, operation).map((template) => {
        const headers: Record<string, string> = { ...template.headers };
        delete headers['Content-Type'];
        if (contentType !== undefined) headers['Content-Type'] = contentType;
        if (encoding !== undefined) headers['Content-Encoding'] = encoding;
        return printable({ ...template, headers, body: { kind: 'raw', text } });
      }),
    );
}

type QueryEntries = (readonly [unknown, unknown])[];

const rawQuery: fc.Arbitrary<QueryEntries> = fc.oneof(
  fc.array(fc.tuple(evilKey, evilShortString), { maxLength: 4 }),
  fc.constantFrom<QueryEntries>(
    [[new Verbatim('sku[]'), 'x']],
    [[new Verbatim('sku[a]'), 'b']],
    [[new Verbatim('%zz'), new Verbatim('%zz')]],
    [[new Verbatim('__proto__[polluted]'), 'yes']],
    [[new Verbatim('constructor[prototype][polluted]'), 'yes']],
    [['sku', new Verbatim('x'.repeat(8_000))]],
    Array.from({ length: 1_200 }, (_, index) => [`p${index}`, '1'] as const),
    [
      ['sku', 'a'],
      ['sku', 'b'],
      ['uom', 'PC'],
      ['uom', 'DOZ'],
    ],
    [[new Verbatim(''), new Verbatim('')]],
  ),
);

/** Documented operations with random Accept headers, query strings, X-Request-Ids and credentials. */
export function headerAndQueryRequest(
  document: ApiDocument,
  operations: readonly Operation[],
): fc.Arbitrary<RequestTemplate> {
  const requestId = fc.oneof(
    fc.constantFrom('abc-123', 'a'.repeat(128), 'a'.repeat(129), 'x y', '<script>', "'; drop", 'é', '../..'),
    fc.string({ maxLength: 40 }),
  );
  const authorization = fc.constantFrom(
    'Bearer',
    'Bearer ',
    'bearer x.y.z',
    'Basic dXNlcjpwYXNz',
    `Bearer ${'a'.repeat(6_000)}`,
    'Bearer eyJhbGciOiJIUzI1NiJ9.e30.',
    'Bearer a.b',
  );
  return fc
    .tuple(
      fc.constantFrom(...operations),
      fc.option(fc.oneof(fc.constantFrom(...ACCEPT_HEADERS), fc.string({ maxLength: 30 })), {
        freq: 5,
        nil: undefined,
      }),
      fc.option(rawQuery, { freq: 3, nil: undefined }),
      fc.option(requestId, { freq: 2, nil: undefined }),
      fc.option(authorization, { freq: 6, nil: undefined }),
      token,
    )
    .chain(([operation, accept, query, id, credentials, tokenKind]) =>
      operationRequest(document, operation).map((template) => {
        const headers: Record<string, string> = { ...template.headers };
        if (accept !== undefined) headers.Accept = accept;
        if (id !== undefined) headers['X-Request-Id'] = id;
        if (credentials !== undefined) headers.Authorization = credentials;
        return printable({
          ...template,
          headers,
          query: query ?? template.query,
          token: credentials === undefined ? tokenKind : 'missing',
        });
      }),
    );
}

/** Every documented path parameter replaced by an evil segment. */
export function evilPathRequest(
  document: ApiDocument,
  operations: readonly Operation[],
): fc.Arbitrary<RequestTemplate> {
  const withParameters = operations.filter((operation) => operation.pathParameters.length > 0);
  return fc
    .tuple(fc.constantFrom(...withParameters), fc.array(evilSegment, { minLength: 3, maxLength: 3 }))
    .chain(([operation, segments]) =>
      operationRequest(document, operation).map((template) =>
        printable({
          ...template,
          pathValues: Object.fromEntries(operation.pathParameters.map((name, index) => [name, segments[index]])),
        }),
      ),
    );
}
