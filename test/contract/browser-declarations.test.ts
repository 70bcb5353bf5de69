import { beforeAll, describe, expect, it } from 'vitest';
import { servedApiDocument } from '../support/contract-document.js';

/**
 * Issue 27: what D33 adds to the answers (validators, CORS, compression, the event stream) is in the document, so
 * tools see it. The response check (test/support/contract.ts) holds statuses and bodies, not headers: these do.
 */
interface Header {
  readonly description?: string;
  readonly schema?: { readonly type?: string };
}

interface Response {
  readonly $ref?: string;
  readonly description: string;
  readonly headers?: Readonly<Record<string, Header>>;
  readonly content?: Readonly<Record<string, { readonly schema?: Record<string, unknown> }>>;
  readonly 'x-optional-content'?: Readonly<Record<string, { readonly schema?: Record<string, unknown> }>>;
}

interface Parameter {
  readonly $ref?: string;
  readonly name?: string;
  readonly in?: string;
}

interface Operation {
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly security?: readonly unknown[];
  readonly parameters?: readonly Parameter[];
  readonly responses: Readonly<Record<string, Response>>;
}

interface ApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components: {
    readonly responses: Readonly<Record<string, Response>>;
    readonly parameters: Readonly<Record<string, Parameter>>;
  };
}

let document: ApiDocument;
beforeAll(async () => {
  document = (await servedApiDocument()) as ApiDocument;
});

function operations(): Operation[] {
  return Object.values(document.paths).flatMap((item) => Object.values(item));
}

function operation(operationId: string): Operation {
  const found = operations().find((each) => each.operationId === operationId);
  if (!found) throw new Error(`no operation ${operationId}`);
  return found;
}

function response(declared: Response): Response {
  if (!declared.$ref) return declared;
  return document.components.responses[declared.$ref.replace('#/components/responses/', '')]!;
}

function parameterNames(op: Operation): string[] {
  return (op.parameters ?? []).map((parameter) =>
    parameter.$ref
      ? document.components.parameters[parameter.$ref.replace('#/components/parameters/', '')]!.name!
      : parameter.name!,
  );
}

const TAGGED_READS = [
  'products-findall',
  'products-findbyspkey',
  'lu-findbypkey',
  'packaging-units-findbypkey',
  'reservations-findbyid',
];

describe('the document declares D33 (issue 27)', () => {
  it('declares the ETag on every answer that carries one, and 304 and If-None-Match on every tagged read', () => {
    const tagged = operations().flatMap((op) =>
      Object.entries(op.responses)
        .filter(([, declared]) => response(declared).headers?.ETag)
        .map(([status]) => `${op.operationId} ${status}`),
    );

    expect(tagged.sort()).toEqual(
      [
        ...TAGGED_READS.flatMap((id) => [`${id} 200`, `${id} 304`]),
        'products-update 200',
        'packaging-units-update 200',
        'lu-changelock 200',
        'packaging-units-releasepu 200',
        'reservations-pick 201',
      ].sort(),
    );
    for (const id of TAGGED_READS) {
      expect(operation(id).responses['304']!.content, id).toBeUndefined();
      expect(parameterNames(operation(id)), id).toContain('If-None-Match');
    }
  });

  it('declares If-Match and the 412 owms.wms.inv.preconditionFailed on the two writes that check it', () => {
    const checked = operations().filter((op) => op.responses['412']);

    expect(checked.map((op) => op.operationId).sort()).toEqual(['packaging-units-update', 'products-update']);
    for (const op of checked) {
      expect(parameterNames(op)).toContain('If-Match');
      expect(op.responses['412']!.description).toContain('owms.wms.inv.preconditionFailed');
      expect(op.responses['412']!.content).toEqual({
        'application/hal+json': { schema: { $ref: '#/components/schemas/ApiDeclinedError' } },
      });
    }
  });

  it('declares Vary, Content-Encoding, the CORS headers and X-Request-Id on every answer of every operation', () => {
    const missing = operations().flatMap((op) =>
      Object.entries(op.responses).flatMap(([status, declared]) =>
        ['Vary', 'Content-Encoding', 'Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'X-Request-Id']
          .filter((name) => !response(declared).headers?.[name])
          .map((name) => `${op.operationId} ${status} ${name}`),
      ),
    );

    expect(missing).toEqual([]);
  });

  it('declares the preflight on every path: 204 with the methods, headers and max age a page may use', () => {
    const paths = Object.entries(document.paths);
    const preflights = paths.flatMap(([, item]) => (item.options ? [item.options] : []));

    expect(preflights).toHaveLength(paths.length);
    for (const preflight of preflights) {
      expect(preflight.tags).toEqual(['CORS']);
      expect(preflight.security).toEqual([]);
      expect(Object.keys(preflight.responses).sort()).toEqual(['200', '204', '400', '401']);
      expect(parameterNames(preflight)).toEqual(
        expect.arrayContaining(['Origin', 'Access-Control-Request-Method', 'Access-Control-Request-Headers']),
      );
    }
    const answered = response(preflights[0]!.responses['204']!);
    expect(answered.content).toBeUndefined();
    expect(answered.headers?.['Access-Control-Allow-Methods']).toBeDefined();
    expect(answered.headers?.['Access-Control-Allow-Headers']?.description).toBe(
      'The headers a page may send: Authorization, Content-Type, Accept, Idempotency-Key, If-Match, If-None-Match, ' +
        'Last-Event-ID, X-Request-Id, traceparent, tracestate',
    );
    expect(answered.headers?.['Access-Control-Max-Age']).toEqual({
      description: 'Seconds a browser may keep the answer: 600',
      schema: { type: 'integer' },
    });
  });

  it('declares the event stream with Last-Event-ID, and its 503 with Retry-After', () => {
    const feed = operation('events-feed');

    expect(Object.keys(feed.responses['200']!.content ?? {})).toEqual(['application/json', 'text/event-stream']);
    expect(parameterNames(feed)).toContain('Last-Event-ID');
    expect(feed.responses['503']!.description).toContain('EVENT_STREAMS_MAX');
    expect(feed.responses['503']!.headers?.['Retry-After']?.schema).toEqual({ type: 'integer' });
  });

  it("declares D11's 404 without content, so tools take the body-less one, and keeps not.found's body aside", () => {
    const notFound = operation('products-findall').responses['404']!;

    expect(notFound.content).toBeUndefined();
    expect(notFound['x-optional-content']).toEqual({
      'application/hal+json': { schema: { $ref: '#/components/schemas/ApiDeclinedError' } },
    });
  });
});
