import fc from 'fast-check';
import type { ApiDocument, Operation } from './api-document.js';
import { evilKey, evilSegment, evilShortString } from './evil-values.js';
import { printable, type RequestTemplate } from './fuzz-client.js';
import { applyMutation, mutation, ofOneKind } from './mutations.js';
import { valueOf } from './schema-values.js';

/** Request headers a client may send; most requests use the plain ones. */
export const ACCEPT_HEADERS: readonly string[] = [
  '*/*',
  'application/json',
  'application/hal+json',
  'application/vnd.openwms.packaging-unit-v1+json',
  'application/vnd.owms.packaging-unit-v1+json',
  'application/xml',
  'text/xml',
  'text/*',
  'text/html',
  'image/png',
  'application/json;q=0',
  'application/json;q=abc, */*;q=0.1',
  ';;;,,,',
  'application/*',
  '*/*;q=0, application/hal+json',
];

export const JSON_CONTENT_TYPES: readonly string[] = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/hal+json',
  'application/vnd.anything+json',
];

const accept = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 12 },
  { arbitrary: fc.constantFrom('*/*', 'application/json', 'application/hal+json'), weight: 4 },
  { arbitrary: fc.constantFrom(...ACCEPT_HEADERS), weight: 3 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
);

export const token = fc.oneof(
  { arbitrary: fc.constant<RequestTemplate['token']>('valid'), weight: 60 },
  fc.constant<RequestTemplate['token']>('missing'),
  fc.constant<RequestTemplate['token']>('garbage'),
);

function pathValue(document: ApiDocument, operation: Operation, name: string): fc.Arbitrary<unknown> {
  const valid = valueOf(document, { type: 'string', minLength: 1 }, { name, path: operation.path });
  return fc.oneof({ arbitrary: valid, weight: 7 }, { arbitrary: evilSegment, weight: 3 });
}

type QueryEntry = readonly [unknown, unknown];

function queryEntries(document: ApiDocument, operation: Operation): fc.Arbitrary<QueryEntry[]> {
  const declared = operation.queryParameters.map((parameter) => {
    const valid = valueOf(document, parameter.schema, { name: parameter.name, path: operation.path });
    const value = fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: evilShortString, weight: 2 });
    const entries = value.map((item): QueryEntry[] =>
      (Array.isArray(item) ? item : [item]).map((one): QueryEntry => [parameter.name, one]),
    );
    return fc.option(entries, { freq: parameter.required ? 20 : 2, nil: [] });
  });
  const extra = fc.array(fc.tuple(fc.oneof(evilKey, fc.constantFrom('sku', 'bk', 'uom', 'amount')), evilShortString), {
    maxLength: 2,
  });
  return fc
    .tuple(fc.tuple(...declared), fc.option(extra, { freq: 4, nil: [] }))
    .map(([lists, more]) => [...lists.flat(), ...more]);
}

type Body = RequestTemplate['body'];

/** A valid body from the operation's schema, then perhaps broken by one mutation; or no body, or raw text. */
function bodyOf(document: ApiDocument, operation: Operation): fc.Arbitrary<{ body: Body; contentType?: string }> {
  if (operation.bodies.length === 0) return fc.constant({ body: undefined });
  const choices = operation.bodies.map(({ mediaType, schema }) => {
    const kind = fc.constantFrom('Piece', 'Piece', 'Piece', 'Weight', undefined);
    const value = fc
      .tuple(valueOf(document, schema), kind, mutation)
      .map(([valid, oneKind, change]) => applyMutation(ofOneKind(valid, oneKind), change));
    if (mediaType === 'application/x-www-form-urlencoded') {
      const form = value.map((item): Body => ({
        kind: 'form',
        fields: typeof item === 'object' && item !== null ? Object.entries(item) : [['value', item]],
      }));
      return form.map((body) => ({ body, contentType: mediaType }));
    }
    return fc
      .tuple(value, fc.constantFrom(...JSON_CONTENT_TYPES))
      .map(([item, contentType]) => ({ body: { kind: 'json', value: item } as Body, contentType }));
  });
  const raw = fc
    .tuple(
      fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('{', '[1,]', "{'a':1}", 'null', '""')),
      fc.constantFrom(...JSON_CONTENT_TYPES),
    )
    .map(([text, contentType]) => ({ body: { kind: 'raw', text } as Body, contentType }));
  return fc.oneof(
    { arbitrary: fc.oneof(...choices), weight: 16 },
    { arbitrary: fc.constant({ body: undefined }), weight: 1 },
    { arbitrary: raw, weight: 1 },
  );
}

/** Requests for one operation of the document: valid, boundary and malformed ones. */
export function operationRequest(document: ApiDocument, operation: Operation): fc.Arbitrary<RequestTemplate> {
  const pathValues = fc.record(
    Object.fromEntries(operation.pathParameters.map((name) => [name, pathValue(document, operation, name)])),
  );
  return fc
    .record({
      pathValues,
      query: queryEntries(document, operation),
      body: bodyOf(document, operation),
      accept,
      token,
      chunked: fc.boolean(),
    })
    .map(({ pathValues: values, query, body, accept: acceptHeader, token: credentials, chunked }) => {
      const headers: Record<string, string> = {};
      if (body.contentType) headers['Content-Type'] = body.contentType;
      if (acceptHeader !== undefined) headers.Accept = acceptHeader;
      return printable({
        method: operation.method,
        path: operation.path,
        pathValues: values,
        query,
        headers,
        body: body.body,
        token: credentials,
        chunked,
      });
    });
}
