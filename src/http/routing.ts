import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { match } from 'path-to-regexp';
import type { Idempotency } from '../idempotency/middleware.js';
import { escapesLoneSurrogate, parseJson } from '../json.js';
import { requireScopes, type RequiredScopes } from './auth.js';
import { isXmlType } from './media-types.js';
import { notAcceptable, payloadTooLarge, unreadableBody, unsupportedMediaType } from './server-error.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type BodyKind = 'json' | 'form';

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
  readonly handler: (req: Request, res: Response) => Promise<void> | void;
  /** OpenAPI description; request schemas are the zod schemas the handler validates with. */
  readonly doc?: Omit<RouteConfig, 'method' | 'path'>;
}

const CONSUMED_TYPES: Record<BodyKind, readonly string[]> = {
  json: ['application/json', 'application/*+json'],
  form: ['application/x-www-form-urlencoded'],
};

/** D7: XML is served only when the client names the XML type itself; a wildcard Accept never selects it. */
function chooseMediaType(req: Request, produces: readonly string[]): string | undefined {
  const accept = (req.headers.accept ?? '').toLowerCase();
  const offered = produces.filter((type) => !isXmlType(type) || accept.includes(type));
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
function translateBodyError(error: unknown, limit: string): unknown {
  const failure = error as BodyParserError;
  if (failure?.type === 'entity.too.large') return payloadTooLarge(limit);
  return unreadableBody(failure?.message ?? 'the body could not be read');
}

function readBody(consumes: readonly BodyKind[] | undefined, limit: string): RequestHandler[] {
  if (!consumes) return [];
  const accepted = consumes.flatMap((kind) => CONSUMED_TYPES[kind]);
  const jsonText = express.text({ type: CONSUMED_TYPES.json as string[], limit });
  const form = express.urlencoded({ extended: false, limit, parameterLimit: 1000 });

  const checkType: RequestHandler = (req, _res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return next();
    if (!req.is(accepted as string[])) {
      return next(unsupportedMediaType(req.headers['content-type'] ?? '(none)', accepted));
    }
    next();
  };
  const parse: RequestHandler = (req, res, next) => {
    const done = (error?: unknown): void => {
      if (error) return next(translateBodyError(error, limit));
      if (typeof req.body === 'string') {
        if (req.body.trim() === '') {
          req.body = undefined;
        } else {
          const text = req.body;
          try {
            req.rawBody = text;
            req.body = parseJson(text);
          } catch (parseError) {
            return next(unreadableBody(`malformed JSON (${(parseError as Error).message})`));
          }
          if (escapesLoneSurrogate(text, req.body)) {
            return next(unreadableBody('a string holds a lone UTF-16 surrogate, which is no character'));
          }
        }
      }
      next();
    };
    if (consumes.includes('json') && req.is(CONSUMED_TYPES.json as string[])) return jsonText(req, res, done);
    if (consumes.includes('form') && req.is(CONSUMED_TYPES.form as string[])) return form(req, res, done);
    next();
  };
  return [checkType, parse];
}

/** Express path syntax → OpenAPI path syntax. */
function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/**
 * The service's route table. Each route runs, in D5's order: content negotiation (406), content type (415),
 * body parsing (400/413), then its handler (which validates). The table also answers which methods a path
 * allows, so unknown methods get 405 and unknown paths 404.
 */
export class Routes {
  readonly router = express.Router({ caseSensitive: true });
  private readonly matchers: { method: Method; matches: (path: string) => boolean }[] = [];

  private readonly registry: OpenAPIRegistry | undefined;
  private readonly idempotency: Idempotency | undefined;
  private readonly requiredScopes: RequiredScopes;

  constructor(
    private readonly bodyLimit: string,
    options: { registry?: OpenAPIRegistry; idempotency?: Idempotency; requiredScopes?: RequiredScopes } = {},
  ) {
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
      ...readBody(definition.consumes, this.bodyLimit),
      ...(writes && this.idempotency ? [this.idempotency.before] : []),
      // Express 5 forwards a rejected promise to the error handler.
      (req: Request, res: Response) => definition.handler(req, res),
      ...(writes && this.idempotency ? [this.idempotency.afterError] : []),
    ];
    const method = definition.method.toLowerCase() as Lowercase<Method>;
    this.router[method](definition.path, ...handlers);
    const matcher = match(definition.path, { decode: false });
    this.matchers.push({ method: definition.method, matches: (path) => matcher(path) !== false });
    if (this.registry && definition.doc) {
      this.registry.registerPath({ method, path: openApiPath(definition.path), ...definition.doc });
    }
    return this;
  }

  allowedMethods(path: string): Method[] {
    const methods = new Set(this.matchers.filter((entry) => entry.matches(path)).map((entry) => entry.method));
    return [...methods];
  }
}
