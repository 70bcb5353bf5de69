import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Hash } from 'node:crypto';
import type { ZodObject, ZodType } from 'zod';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { match } from 'path-to-regexp';
import type { BodyLimits, ByteSize } from '../config.js';
import type { Idempotency } from '../idempotency/middleware.js';
import { escapesLoneSurrogate, firstRepeatedKey, parseJson } from '../json.js';
import { requireScopes, type RequiredScopes } from './auth.js';
import { declaredLength, readPieces, readText } from './body.js';
import { BodyBudget, type BodyShare } from './body-budget.js';
import { isNamedOnly, NDJSON } from './media-types.js';
import { notAcceptable, payloadTooLarge, ServerError, unreadableBody, unsupportedMediaType } from './server-error.js';
import { z } from '../openapi/zod.js';
import {
  apiError,
  BODY_OPTIONAL,
  mergeResponses,
  noBody,
  serverError,
  type ResponseDoc,
} from '../openapi/responses.js';
import { conditionalHeaderSyntax, ETAG_HEADER, PRECONDITION_FAILED } from './validators.js';
import { PREFLIGHT_DOC, PREFLIGHT_TAG } from './preflight-doc.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** `ndjson` is a streamed body: left unread for the handler, which reads it line by line (see readLines). */
export type BodyKind = 'json' | 'form' | 'ndjson';

declare module 'express-serve-static-core' {
  interface Request {
    /** The representation content negotiation chose for the response. */
    mediaType?: string;
  }
}

export interface RouteDefinition {
  readonly method: Method;
  /** Express 5 path syntax, e.g. `/v1/products/:pKey`. */
  readonly path: string;
  /** Response media types, the default first; omitted when the success response has no body. */
  readonly produces?: readonly string[];
  /** Accepted request bodies; omitted when the operation reads no body. */
  readonly consumes?: readonly BodyKind[];
  /** The body is an array of many resources: read up to the bulk limit instead of the limit of one resource. */
  readonly bulk?: boolean;
  /**
   * Reads a JSON body as it arrives instead of whole (issue 26): gets its decoded text piece by piece and answers
   * what the handler finds as `req.body`; `resourceLimit` is the limit of one resource. A bulk body holds a small
   * share of the body budget to begin with and grows it by what it keeps (`share`, issue 39).
   */
  readonly readJson?: (
    pieces: AsyncIterable<string>,
    resourceLimit: ByteSize,
    req: Request,
    share: BodyShare | undefined,
  ) => Promise<unknown>;
  /**
   * The JSON body counts in the budget at what `readJson` keeps, growing its `share` as it does (issue 39), instead
   * of at its length: two limits of one resource to begin with.
   */
  readonly growsShare?: boolean;
  readonly handler: (req: Request, res: Response) => Promise<void> | void;
  /** The operation in the OpenAPI document; request schemas are the zod schemas the handler validates with. */
  readonly doc: OperationDoc;
}

/**
 * What the OpenAPI document says of one operation. `responses` lists what the operation itself answers; the
 * answers every route of its shape can give (401/403 without a token or scope, 400/413/415 for a body, 406 for
 * negotiation, 422 and the Idempotency-Key header for writes, 503) are added by the route table.
 */
export interface OperationDoc {
  /** The spec's link name where it has one (D7). */
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly description?: string;
  /** Open without a token (D5); must match the app's public paths. */
  readonly public?: boolean;
  /** Left out of the document (the API explorer's own files). */
  readonly hidden?: boolean;
  readonly request?: {
    readonly params?: ZodObject;
    readonly query?: ZodObject;
    /** Request headers the operation reads besides the ones the route table declares. */
    readonly headers?: ZodObject;
    /** The body's schema, in each media type the route consumes but NDJSON. */
    readonly body?: ZodType;
    /** The schema of each line of an NDJSON body. */
    readonly lines?: ZodType;
  };
  readonly responses: Readonly<Record<number, ResponseDoc>>;
  /**
   * D33's validators: a `read` of one resource answers an ETag and 304 to If-None-Match; a `write` of one checks
   * If-Match (412) and answers the new ETag.
   */
  readonly validators?: 'read' | 'write';
}

const CONSUMED_TYPES: Record<BodyKind, readonly string[]> = {
  json: ['application/json', 'application/*+json'],
  form: ['application/x-www-form-urlencoded'],
  ndjson: [NDJSON],
};

/**
 * D7: XML is served only when the client names the XML type itself, and D33's event stream likewise: a wildcard
 * Accept (any type, or any text type) never selects either.
 */
function chooseMediaType(req: Request, produces: readonly string[]): string | undefined {
  const accept = (req.headers.accept ?? '').toLowerCase();
  const offered = produces.filter((type) => !isNamedOnly(type) || accept.includes(type));
  return req.accepts(offered) || undefined;
}

function negotiate(produces: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    const chosen = chooseMediaType(req, produces);
    if (!chosen) return next(notAcceptable(produces));
    req.mediaType = chosen;
    next();
  };
}

interface BodyParserError {
  type?: string;
  status?: number;
  message: string;
}

/** Whatever goes wrong while reading a body (bad encoding, broken compression, an aborted upload) is the client's. */
function translateBodyError(error: unknown, limit: ByteSize): unknown {
  if (error instanceof ServerError) return error;
  const failure = error as BodyParserError;
  if (failure?.type === 'entity.too.large') return payloadTooLarge(limit.text);
  return unreadableBody(failure?.message ?? 'the body could not be read');
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

interface BodyReading {
  readonly limit: ByteSize;
  /** Of one resource, when `limit` is the bulk limit. */
  readonly resourceLimit: ByteSize;
  readonly readJson?: RouteDefinition['readJson'];
  readonly growsShare?: boolean;
  /** Of a streamed (NDJSON) body, which is never held and so waits for no budget. */
  readonly importLimit: ByteSize;
  /** Bulk bodies only: a body of one resource is small, and waiting behind a bulk upload would starve it. */
  readonly budget?: BodyBudget;
  /** The idempotency hash to feed with a JSON body's text as it is read, when the request asks for one. */
  readonly hashOf?: (req: Request) => Hash | undefined;
}

/** What a body read as it arrives counts of the budget to begin with, in limits of one resource. */
const STREAMED_SHARE = 2;

function readBody(
  consumes: readonly BodyKind[] | undefined,
  { limit, resourceLimit, readJson: readJsonAsItArrives, growsShare, importLimit, budget, hashOf }: BodyReading,
): RequestHandler[] {
  if (!consumes) return [];
  const accepted = consumes.flatMap((kind) => CONSUMED_TYPES[kind]);
  const form = express.urlencoded({ extended: false, limit: limit.bytes, parameterLimit: 1000 });

  const checkType: RequestHandler = (req, _res, next) => {
    if (!hasBody(req)) return next();
    if (!req.is(accepted as string[])) {
      return next(unsupportedMediaType(req.headers['content-type'] ?? '(none)', accepted));
    }
    next();
  };
  // A declared length over the limit is refused before anything is read or waited for.
  const admit: RequestHandler = (req, res, next) => {
    if (!hasBody(req)) return next();
    const length = declaredLength(req);
    if (consumes.includes('ndjson') && req.is(CONSUMED_TYPES.ndjson as string[])) {
      return next(length !== undefined && length > importLimit.bytes ? payloadTooLarge(importLimit.text) : undefined);
    }
    if (length !== undefined && length > limit.bytes) return next(payloadTooLarge(limit.text));
    if (!budget) return next();
    // Counted at its length, or (growsShare) at a piece and the item being read to begin with.
    const size = Math.min(length ?? limit.bytes, growsShare ? STREAMED_SHARE * resourceLimit.bytes : Infinity);
    budget.take(size, res).then((share) => {
      res.locals.bodyShare = share;
      next();
    }, next);
  };
  /** `asIs`: the error is the route's reader's own, not one of reading the body. */
  const readJson = (req: Request, done: (error?: unknown, asIs?: boolean) => void): void => {
    const hash = hashOf?.(req);
    const onPiece = hash && ((piece: string): void => void hash.update(piece));
    const read = readJsonAsItArrives
      ? readJsonAsItArrives(
          readPieces(req, limit, onPiece),
          resourceLimit,
          req,
          req.res!.locals.bodyShare as BodyShare | undefined,
        )
      : readText(req, limit, onPiece);
    read.then(
      (body) => {
        if (hash) req.requestHash = hash.digest('hex');
        req.body = body;
        done();
      },
      (error: unknown) => done(error, readJsonAsItArrives !== undefined),
    );
  };
  const parse: RequestHandler = (req, res, next) => {
    const done = (error?: unknown, asIs = false): void => {
      if (error) return next(asIs ? error : translateBodyError(error, limit));
      if (typeof req.body === 'string') {
        if (req.body.trim() === '') {
          req.body = undefined;
        } else {
          const text = req.body;
          try {
            req.body = parseJson(text);
          } catch (parseError) {
            return next(unreadableBody(`malformed JSON (${(parseError as Error).message})`));
          }
          if (escapesLoneSurrogate(text, req.body)) {
            return next(unreadableBody('a string holds a lone UTF-16 surrogate, which is no character'));
          }
          const repeatedKey = firstRepeatedKey(text);
          if (repeatedKey !== undefined) {
            return next(unreadableBody(`an object names the key ${JSON.stringify(repeatedKey)} more than once`));
          }
        }
      }
      next();
    };
    if (consumes.includes('json') && req.is(CONSUMED_TYPES.json as string[])) return readJson(req, done);
    if (consumes.includes('form') && req.is(CONSUMED_TYPES.form as string[])) return form(req, res, done);
    next();
  };
  return [checkType, admit, parse];
}

/** Express path syntax → OpenAPI path syntax. */
function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

const REQUEST_ID_HEADER = {
  'X-Request-Id': {
    description: "The request's id: the client's X-Request-Id, or a new UUID",
    schema: { type: 'string' },
  },
} as const;

/** Headers any answer may carry: CORS for a listed Origin, compression (D33). */
const GENERAL_HEADERS = {
  'Access-Control-Allow-Origin': {
    description: "The request's Origin, when it is one of CORS_ALLOWED_ORIGINS (D33)",
    schema: { type: 'string' },
  },
  'Access-Control-Expose-Headers': {
    description: 'The headers a page of a listed Origin may read (D33)',
    schema: { type: 'string' },
  },
  Vary: { description: 'Origin (with CORS_ALLOWED_ORIGINS set), Accept-Encoding', schema: { type: 'string' } },
  'Content-Encoding': {
    description: 'gzip for a body over 1 KiB when Accept-Encoding allows it (D33)',
    schema: { type: 'string' },
  },
} as const;

const conditionalHeaders = {
  read: z.object({
    'If-None-Match': z
      .string()
      .optional()
      .openapi({ description: 'An ETag read before: 304 without a body while the resource is unchanged' }),
  }),
  write: z.object({
    'If-Match': z
      .string()
      .optional()
      .openapi({
        description:
          'The ETag the change is based on (any of its media types), or * alone: 412 when the resource changed; ' +
          'a value that is neither is a 400',
      }),
  }),
} as const;

const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .optional()
    .openapi({ description: 'Makes a retry of this write answer the first response instead of doing it again' }),
});

const HOST_REFUSED = serverError('The Host header is no host name, or not one of ALLOWED_HOSTS');

/** The answers a route can give because of its shape rather than its logic. */
function standardResponses(definition: RouteDefinition, idempotent: boolean): Record<number, ResponseDoc> {
  const { doc } = definition;
  const standard: Record<number, ResponseDoc> = {};
  const add = (status: number, response: ResponseDoc): void => {
    standard[status] = standard[status] ? mergeResponses(standard[status], response) : response;
  };
  add(400, HOST_REFUSED);
  if (doc.request?.params || doc.request?.query || doc.request?.body || definition.consumes) {
    add(400, apiError('The request is not valid', ['core.validation.error']));
  }
  if (definition.consumes) {
    add(400, serverError('The body is not readable (malformed JSON, bytes that are not UTF-8, broken compression)'));
    add(
      413,
      serverError(
        definition.bulk
          ? 'The body exceeds the limit of bulk operations (BULK_BODY_LIMIT, 64 MB unless configured)'
          : 'The body exceeds the limit (BODY_LIMIT, 1 MB unless configured)',
      ),
    );
    if (definition.consumes.includes('ndjson')) {
      add(
        413,
        serverError(
          'an NDJSON body exceeds IMPORT_BODY_LIMIT (1 GB unless configured), or one of its lines BODY_LIMIT',
        ),
      );
      add(
        408,
        serverError(
          'NDJSON: the client sent nothing for IMPORT_STALL_TIMEOUT_MS, or the body did not arrive within ' +
            'HTTP_REQUEST_TIMEOUT_MS; nothing is stored (Connection: close)',
        ),
      );
    }
    add(415, serverError('The body is of a media type the operation does not read'));
  }
  if (!doc.public) {
    add(
      401,
      serverError('No bearer token, or one that is not valid', {
        'WWW-Authenticate': {
          description: 'RFC 6750: `Bearer` without a token, else `Bearer error="invalid_token", error_description="…"`',
        },
      }),
    );
    add(403, {
      ...apiError('The token lacks a required scope', ['owms.common.auth.insufficientScope']),
      headers: {
        'WWW-Authenticate': {
          description:
            'RFC 6750, when a scope is missing: `Bearer error="insufficient_scope", error_description="…", scope="…"`',
        },
      },
    });
  }
  if (definition.produces) add(406, serverError('None of the media types in Accept is available'));
  if (idempotent) {
    add(
      409,
      apiError('A request with the same Idempotency-Key is still running', ['owms.common.idempotency.inProgress']),
    );
    add(422, apiError('The Idempotency-Key was used for another request', ['owms.common.idempotency.keyReused']));
  }
  if (doc.validators === 'read') add(304, noBody('Unchanged since the ETag in If-None-Match; no body', ETAG_HEADER));
  if (doc.validators) add(400, apiError('If-Match or If-None-Match is malformed', ['core.validation.error']));
  if (doc.validators === 'write') {
    add(412, apiError('The resource changed since the ETag in If-Match was read', [PRECONDITION_FAILED]));
  }
  add(
    503,
    serverError(
      'The database is unavailable, every connection is busy, or the instance is shutting down; retry later',
      {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
    ),
  );
  return standard;
}

function withHeaders(response: ResponseDoc, headers: ResponseDoc['headers']): ResponseDoc {
  return { ...response, headers: { ...response.headers, ...headers } };
}

/** Each status as zod-to-openapi registers it, with the headers every answer (and every success) may carry. */
function responseConfigs(
  responses: Readonly<Record<number, ResponseDoc>>,
  successHeaders: ResponseDoc['headers'],
): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const full = withHeaders(response, {
        ...REQUEST_ID_HEADER,
        ...GENERAL_HEADERS,
        ...(Number(status) < 300 ? successHeaders : {}),
      });
      return [
        status,
        {
          description: full.description,
          ...(full.headers && {
            headers: Object.fromEntries(
              Object.entries(full.headers).map(([name, header]) => [
                name,
                { ...header, schema: header.schema ?? { type: 'string' } },
              ]),
            ),
          }),
          ...(full.content && {
            content: Object.fromEntries(Object.entries(full.content).map(([type, schema]) => [type, { schema }])),
          }),
          // The status may come without its body: declareOptionalBodies takes its content out of `content`.
          ...(full.bodyOptional && { [BODY_OPTIONAL]: true }),
        } as ResponseConfig,
      ];
    }),
  );
}

/** The operation as zod-to-openapi registers it. */
function routeConfig(definition: RouteDefinition, idempotent: boolean): RouteConfig {
  const { doc } = definition;
  const responses: Record<number, ResponseDoc> = { ...doc.responses };
  for (const [status, response] of Object.entries(standardResponses(definition, idempotent))) {
    const declared = responses[Number(status)];
    responses[Number(status)] = declared ? mergeResponses(declared, response) : response;
  }
  const replayed = { 'Idempotent-Replayed': { description: '`true` on a repeated answer to an Idempotency-Key' } };
  const requestHeaders = [
    ...(idempotent ? [idempotencyHeaders] : []),
    ...(doc.validators ? [conditionalHeaders[doc.validators]] : []),
    ...(doc.request?.headers ? [doc.request.headers] : []),
  ];
  const bodies = (definition.consumes ?? []).flatMap((kind) => {
    const schema = kind === 'ndjson' ? doc.request?.lines : doc.request?.body;
    return schema ? [[CONSUMED_TYPES[kind][0]!, { schema }] as const] : [];
  });
  return {
    method: definition.method.toLowerCase() as RouteConfig['method'],
    path: openApiPath(definition.path),
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description && { description: doc.description }),
    tags: [...doc.tags],
    ...(doc.public && { security: [] }),
    request: {
      ...(doc.request?.params && { params: doc.request.params }),
      ...(doc.request?.query && { query: doc.request.query }),
      ...(requestHeaders.length > 0 && {
        headers: z.object(Object.assign({}, ...requestHeaders.map((headers) => headers.shape))),
      }),
      ...(bodies.length > 0 && { body: { required: true, content: Object.fromEntries(bodies) } }),
    },
    responses: responseConfigs(responses, {
      ...(idempotent ? replayed : {}),
      // A write without a body (DELETE, 204) has no representation to tag.
      ...(doc.validators && definition.produces ? ETAG_HEADER : {}),
    }),
  };
}

/**
 * D33's preflight, which the CORS middleware answers on every path of the table before any route: declared once
 * per path, so that the preflight's status and headers are in the document beside the path's operations.
 */
function preflightConfig(path: string, params: ZodObject | undefined): RouteConfig {
  const name = path.replace(/[^A-Za-z0-9]+/g, '-').replace(/-$/, '');
  return {
    method: 'options',
    path: openApiPath(path),
    operationId: `cors-preflight${name}`,
    summary: PREFLIGHT_DOC.summary,
    description: PREFLIGHT_DOC.description,
    tags: [PREFLIGHT_TAG],
    security: [],
    request: { ...(params && { params }), headers: PREFLIGHT_DOC.headers },
    responses: responseConfigs({ ...PREFLIGHT_DOC.responses, 400: HOST_REFUSED }, {}),
  };
}

/** `/v1/products` of `/v1/products/:pKey` and of `/v1/products/`; `/index` of `/index`; a path's first two segments. */
function leadingSegments(path: string): string {
  const first = path.indexOf('/', 1);
  if (first === -1) return path;
  const second = path.indexOf('/', first + 1);
  return second === -1 ? path : path.slice(0, second);
}

/**
 * The service's route table. Each route runs, in D5's order: content negotiation (406), content type (415),
 * a declared length over the limit (413) and the body's turn in the budget, body parsing (400/413), then its
 * handler (which validates). The table also answers which methods a path allows, so unknown methods get 405 and
 * unknown paths 404.
 */
export class Routes {
  /** Every route, in the order added. */
  private readonly everyRoute = express.Router({ caseSensitive: true });
  /**
   * The same routes by their leading two literal segments (`/v1/packaging-units`), each in the order added (issue
   * 38 item 4): Express tries a router's routes one by one, and a read near the end of the table went through
   * forty-odd path matches first. A route of one prefix can only match paths of that prefix, so a request whose
   * prefix has routes tries just those; any other path (a trailing or doubled slash, an unknown prefix) tries them
   * all, as before. Undefined once a route's leading segments are not literal: then every request tries them all.
   */
  private byPrefix: Map<string, express.Router> | undefined = new Map();

  /** The table as one handler of the app; `req.route.path` is the full pattern, as the metrics label by it. */
  readonly router: RequestHandler = (req, res, next) => {
    (this.byPrefix?.get(leadingSegments(req.path)) ?? this.everyRoute)(req, res, next);
  };
  private readonly matchers: { method: Method; pattern: string; matches: (path: string) => boolean }[] = [];

  private readonly registry: OpenAPIRegistry | undefined;
  /** The paths whose preflight the document declares already. */
  private readonly preflightDeclared = new Set<string>();
  private readonly idempotency: Idempotency | undefined;
  private readonly requiredScopes: RequiredScopes;
  private readonly budget: BodyBudget;

  constructor(
    private readonly bodyLimits: BodyLimits,
    options: { registry?: OpenAPIRegistry; idempotency?: Idempotency; requiredScopes?: RequiredScopes } = {},
  ) {
    this.budget = new BodyBudget(bodyLimits.budget.bytes, bodyLimits.budgetWaitMs);
    this.registry = options.registry;
    this.idempotency = options.idempotency;
    this.requiredScopes = options.requiredScopes ?? { read: [], write: [] };
  }

  add(definition: RouteDefinition): this {
    const writes = definition.method !== 'GET';
    const scopes = writes ? this.requiredScopes.write : this.requiredScopes.read;
    // Every layer costs a dispatch on each request, so steps with nothing to check are left out.
    const handlers: (RequestHandler | ErrorRequestHandler)[] = [
      ...(scopes.length > 0 ? [requireScopes(scopes)] : []),
      ...(definition.produces ? [negotiate(definition.produces)] : []),
      ...(definition.doc.validators ? [conditionalHeaderSyntax(definition.doc.validators)] : []),
      ...readBody(definition.consumes, {
        limit: definition.bulk ? this.bodyLimits.bulkLimit : this.bodyLimits.limit,
        resourceLimit: this.bodyLimits.limit,
        readJson: definition.readJson,
        growsShare: definition.growsShare,
        importLimit: this.bodyLimits.importLimit,
        budget: definition.bulk ? this.budget : undefined,
        hashOf: writes ? this.idempotency?.hashOf : undefined,
      }),
      ...(writes && this.idempotency ? [this.idempotency.before] : []),
      // Express 5 forwards a rejected promise to the error handler.
      (req: Request, res: Response) => definition.handler(req, res),
      ...(writes && this.idempotency ? [this.idempotency.afterError] : []),
    ];
    const method = definition.method.toLowerCase() as Lowercase<Method>;
    this.everyRoute[method](definition.path, ...handlers);
    const prefix = leadingSegments(definition.path);
    if (!/^(?:\/[A-Za-z0-9_.~-]+){1,2}$/.test(prefix)) this.byPrefix = undefined;
    if (this.byPrefix) {
      let routes = this.byPrefix.get(prefix);
      if (!routes) this.byPrefix.set(prefix, (routes = express.Router({ caseSensitive: true })));
      routes[method](definition.path, ...handlers);
    }
    const matcher = match(definition.path, { decode: false });
    this.matchers.push({
      method: definition.method,
      pattern: definition.path,
      matches: (path) => matcher(path) !== false,
    });
    if (this.registry && !definition.doc.hidden) {
      this.registry.registerPath(routeConfig(definition, writes && this.idempotency !== undefined));
      if (!this.preflightDeclared.has(definition.path)) {
        this.preflightDeclared.add(definition.path);
        this.registry.registerPath(preflightConfig(definition.path, definition.doc.request?.params));
      }
    }
    return this;
  }

  /**
   * The pattern of the route a request was for, when it was answered before reaching one (a 401, a 405): the route
   * of its own method that Express would have chosen, else the first route of any method with that path.
   */
  patternFor(method: string, path: string): string | undefined {
    const routed = method === 'HEAD' ? 'GET' : method;
    const candidates = this.matchers.filter((entry) => entry.matches(path));
    return (candidates.find((entry) => entry.method === routed) ?? candidates[0])?.pattern;
  }

  /** The route pattern a request was answered by (Express's matched route), else the one its path and method fit. */
  routeOf(req: Request): string | undefined {
    return (req.route as { path?: string } | undefined)?.path ?? this.patternFor(req.method, req.path);
  }

  allowedMethods(path: string): Method[] {
    const methods = new Set(this.matchers.filter((entry) => entry.matches(path)).map((entry) => entry.method));
    return [...methods];
  }
}
