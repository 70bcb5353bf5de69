import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { Express } from 'express';
import request from 'supertest';
import { expect } from 'vitest';

/**
 * The response contract: every response an app built by createApp sends in a test is held to the OpenAPI document
 * that app serves (GET /v3/api-docs). The status must be declared for the operation, the Content-Type for the
 * status, and a JSON body must match the declared schema. contract-setup.ts installs it for every test file and
 * fails the test that received a mismatch. Tests that run the built service as a process (test/lifecycle,
 * test/concurrency/crash, the clusters of test/support/service-cluster.ts) talk to it over a socket: their
 * responses are outside this check.
 */

/** One answer as the app sent it. */
export interface Exchange {
  readonly method: string;
  /** The request target as the app received it, query included. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /** Undefined when the body was larger than the check keeps. */
  readonly body: Buffer | undefined;
}

export interface Mismatch {
  /** The test that sent the request; undefined in beforeAll and afterAll hooks. */
  readonly test: string | undefined;
  readonly text: string;
}

type Content = Readonly<Record<string, { readonly schema?: unknown }>>;

interface ResponseObject {
  /** A response declared once under `components.responses` (the preflights', src/http/preflight-doc.ts). */
  readonly $ref?: string;
  readonly content?: Content;
  /**
   * The bodies of a status sometimes answered without one, which the document declares without `content` for
   * standard tools (src/openapi/responses.ts, declareOptionalBodies): checked here when a body comes.
   */
  readonly 'x-optional-content'?: Content;
}

interface OperationObject {
  readonly operationId?: string;
  readonly responses?: Readonly<Record<string, ResponseObject>>;
}

interface OpenApiDocument {
  readonly paths?: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>;
  readonly components?: { readonly responses?: Readonly<Record<string, ResponseObject>> };
}

interface Operation {
  readonly name: string;
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly parameters: number;
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

const DOCUMENT_ID = 'urn:inventory-service:openapi';

// Bigger bodies (exports of whole warehouses) are checked for status and Content-Type only.
const KEPT_BODY_BYTES = 32 * 1024 * 1024;

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

/** OpenAPI's numeric formats and zod's `safeint`, which ajv-formats does not know. */
const NUMBER_FORMATS = {
  int32: { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: 'number', validate: (n: number) => Number.isInteger(n) },
  safeint: { type: 'number', validate: (n: number) => Number.isSafeInteger(n) },
  float: { type: 'number', validate: (n: number) => Number.isFinite(n) },
  double: { type: 'number', validate: (n: number) => Number.isFinite(n) },
} as const;

/**
 * Words ajv's strict mode must take for annotations: OpenAPI's in a Schema Object, and the document's own fields,
 * since ajv compiles the document's root as the schema that `#/components/schemas/…` references resolve in.
 */
const OPENAPI_KEYWORDS = [
  ...['example', 'xml', 'externalDocs', 'discriminator'],
  ...['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags'],
];

function pointer(...segments: string[]): string {
  return segments.map((segment) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
}

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** `/v1/products/{pKey}` as a pattern over the raw (still percent-encoded) request path. */
function pathPattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

function errorLine(error: ErrorObject): string {
  const params = Object.values(error.params as Record<string, unknown>)
    .map((value) => JSON.stringify(value))
    .join(', ');
  return `${error.instancePath || '(body)'} ${error.message ?? error.keyword}${params ? ` (${params})` : ''}`;
}

/** The declarations of one document, with each schema's validator compiled once, when first needed. */
export class ResponseContract {
  private readonly ajv = new Ajv2020({
    allErrors: true,
    strictTypes: false,
    strictTuples: false,
    formats: NUMBER_FORMATS,
  });
  private readonly operations: readonly Operation[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    ajvFormats.default(this.ajv);
    this.ajv.addVocabulary(OPENAPI_KEYWORDS);
    // `#/components/schemas/…` references resolve inside the document.
    this.ajv.addSchema(document as object, DOCUMENT_ID);
    const operations: Operation[] = [];
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const [method, operation] of Object.entries(item)) {
        if (!HTTP_METHODS.has(method)) continue;
        operations.push({
          name: `${method.toUpperCase()} ${template}${operation.operationId ? ` (${operation.operationId})` : ''}`,
          method,
          template,
          pattern: pathPattern(template),
          parameters: (template.match(/\{/g) ?? []).length,
          responses: operation.responses ?? {},
        });
      }
    }
    // OpenAPI matches concrete paths before templated ones (`/v1/products/index` before `/v1/products/{pKey}`).
    this.operations = operations.sort((a, b) => a.parameters - b.parameters);
  }

  /** What is wrong with the answer; nothing when it is documented, or when no operation has its method and path. */
  problems(exchange: Exchange): string[] {
    const method = exchange.method === 'HEAD' ? 'get' : exchange.method.toLowerCase();
    const path = exchange.url.split('?')[0]!;
    // Express ignores one trailing slash.
    const routed = path.length > 1 ? path.replace(/\/$/, '') : path;
    const operation = this.operations.find((each) => each.method === method && each.pattern.test(routed));
    if (!operation) return [];
    const status = String(exchange.status);
    const declaredStatus = [status, `${status[0]}XX`, 'default'].find((key) => operation.responses[key]);
    if (!declaredStatus) {
      return [`${operation.name} declares no ${status} (it declares ${Object.keys(operation.responses).join(', ')})`];
    }
    const { declared, at } = this.resolved(operation, declaredStatus);
    if (exchange.method === 'HEAD') return [];
    const contentKey = declared['x-optional-content'] ? 'x-optional-content' : 'content';
    const content = declared[contentKey] ?? {};
    const declaredTypes = Object.keys(content);
    if (exchange.body?.length === 0) {
      return declaredTypes.length === 0 || contentKey === 'x-optional-content'
        ? []
        : [`no body, but ${operation.name} declares ${status} with a body in ${declaredTypes.join(', ')}`];
    }
    const type = mediaTypeOf(exchange.contentType);
    if (!declaredTypes.includes(type)) {
      return declaredTypes.length === 0
        ? [`a body (${type || 'no Content-Type'}), but ${operation.name} declares ${status} without one`]
        : [`Content-Type ${type || '(none)'} is not declared for ${status}: ${declaredTypes.join(', ')}`];
    }
    if (!isJson(type) || exchange.body === undefined || content[type]?.schema === undefined) return [];
    let value: unknown;
    try {
      value = JSON.parse(exchange.body.toString('utf8'));
    } catch {
      return [`the ${type} body is not JSON`];
    }
    const validate = this.validator(pointer(...at, contentKey, type, 'schema'));
    if (validate(value)) return [];
    return [
      `the body does not match the schema of ${status} ${type}:`,
      ...(validate.errors ?? []).slice(0, 12).map((error) => `  ${errorLine(error)}`),
    ];
  }

  /** The response declared for the status, followed to `components.responses` if it refers there, and where it is. */
  private resolved(operation: Operation, status: string): { declared: ResponseObject; at: string[] } {
    const declared = operation.responses[status]!;
    const shared = /^#\/components\/responses\/([^/]+)$/.exec(declared.$ref ?? '')?.[1];
    if (shared === undefined) {
      return { declared, at: ['paths', operation.template, operation.method, 'responses', status] };
    }
    const target = this.document.components?.responses?.[shared];
    if (!target) throw new Error(`${operation.name}: ${status} refers to ${declared.$ref}, which is not there`);
    return { declared: target, at: ['components', 'responses', shared] };
  }

  private validator(schemaPointer: string): ValidateFunction {
    let validate = this.validators.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${schemaPointer}` });
      this.validators.set(schemaPointer, validate);
    }
    return validate;
  }
}

type Handle = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/** Compiled once per distinct document: every test app of a file serves the same one. */
const contracts = new Map<string, ResponseContract>();
const mismatches: Mismatch[] = [];
const checks = new Set<Promise<void>>();

/** The document the app serves, asked of the app itself past the check (so that request is not recorded). */
async function servedContract(handle: Handle): Promise<ResponseContract> {
  const response = await request((req: IncomingMessage, res: ServerResponse) => handle(req, res)).get('/v3/api-docs');
  if (response.status !== 200) throw new Error(`GET /v3/api-docs answered ${response.status}`);
  let contract = contracts.get(response.text);
  if (!contract) {
    contract = new ResponseContract(response.body as OpenApiDocument);
    contracts.set(response.text, contract);
  }
  return contract;
}

export function describeExchange(exchange: Exchange, problems: readonly string[]): string {
  const body = exchange.body === undefined ? '(not kept: too large)' : exchange.body.toString('utf8', 0, 600);
  return [
    `${exchange.method} ${exchange.url.slice(0, 300)} → ${exchange.status} ${exchange.contentType ?? '(no Content-Type)'}`,
    ...problems.map((problem) => `  ${problem}`),
    `  body: ${body || '(empty)'}`,
  ].join('\n');
}

/** The body as the client reads it once its Content-Encoding (D33's compression) is undone. */
function decoded(body: Buffer, encoding: unknown): Buffer {
  if (encoding === 'gzip') return gunzipSync(body);
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'deflate') return inflateSync(body);
  return body;
}

/** Keeps what the response writes, and hands the whole answer over once it is sent. */
function captureResponse(req: IncomingMessage, res: ServerResponse, done: (exchange: Exchange) => void): void {
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  const chunks: Buffer[] = [];
  let size = 0;
  const keep = (chunk: unknown, encoding: unknown): void => {
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return;
    const buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk);
    size += buffer.length;
    if (size <= KEPT_BODY_BYTES) chunks.push(buffer);
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return write.apply(this, [chunk, ...rest] as Parameters<typeof write>);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return end.apply(this, [chunk, ...rest] as Parameters<typeof end>);
  } as typeof res.end;
  // A response whose client went away never finishes: there is no answer to check.
  res.once('finish', () => {
    const contentType = res.getHeader('content-type');
    done({
      method,
      url,
      status: res.statusCode,
      contentType: contentType === undefined ? undefined : String(contentType),
      body: size <= KEPT_BODY_BYTES ? decoded(Buffer.concat(chunks), res.getHeader('content-encoding')) : undefined,
    });
  });
}

/** Makes the app record every response that does not match the document it serves; returns the same app. */
export function checkResponses(app: Express): Express {
  const target = app as unknown as { handle: Handle };
  const handle: Handle = target.handle.bind(app);
  let contract: Promise<ResponseContract> | undefined;
  target.handle = (req, res, next) => {
    contract ??= servedContract(handle);
    const document = contract;
    const test = expect.getState().currentTestName;
    captureResponse(req, res, (exchange) => {
      const check = document
        .then((found) => found.problems(exchange))
        .catch((error: unknown) => [`the check failed: ${(error as Error).message}`])
        .then((problems) => {
          if (problems.length > 0) mismatches.push({ test, text: describeExchange(exchange, problems) });
        })
        .finally(() => checks.delete(check));
      checks.add(check);
    });
    handle(req, res, next);
  };
  return app;
}

/** The mismatches recorded since the last call, once every sent response is checked. */
export async function takeMismatches(): Promise<Mismatch[]> {
  while (checks.size > 0) await Promise.all([...checks]);
  return mismatches.splice(0);
}

export function mismatchReport(found: readonly Mismatch[], where: string): string {
  const lines = found.map(
    (mismatch) => `${mismatch.test === undefined ? '(sent by a beforeAll/afterAll hook)\n' : ''}${mismatch.text}`,
  );
  return `${found.length} response(s) ${where} do not match the served OpenAPI document:\n\n${lines.join('\n\n')}`;
}
