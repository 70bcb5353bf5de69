/**
 * The API-declined error (spec part 7, D6): business and validation failures with a message key.
 * `body` selects the few shapes the spec prescribes besides the full one.
 */
export type ApiErrorBody = 'full' | 'message-only' | 'empty';

export interface ApiErrorOptions {
  readonly obj?: readonly unknown[];
  readonly body?: ApiErrorBody;
  /** Validation errors carry no `class` (D6). */
  readonly withClass?: boolean;
  /** Headers the answer carries besides the body (a 403's WWW-Authenticate). */
  readonly headers?: Readonly<Record<string, string>>;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly obj: readonly unknown[] | undefined;
  readonly body: ApiErrorBody;
  readonly withClass: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: number,
    readonly messageKey: string | undefined,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.obj = options.obj;
    this.body = options.body ?? 'full';
    this.withClass = options.withClass ?? true;
    this.headers = options.headers ?? {};
  }
}

export const VALIDATION_ERROR = 'core.validation.error';

export function notFound(messageKey: string, message: string, obj?: readonly unknown[]): ApiError {
  return new ApiError(404, messageKey, message, { obj });
}

export function badRequest(messageKey: string, message: string, obj?: readonly unknown[]): ApiError {
  return new ApiError(400, messageKey, message, { obj });
}

export function conflict(messageKey: string, message: string, obj?: readonly unknown[]): ApiError {
  return new ApiError(409, messageKey, message, { obj });
}

export function validationError(problems: readonly { path: string; message: string }[]): ApiError {
  return new ApiError(400, VALIDATION_ERROR, problems.map((p) => `${p.path}: ${p.message}`).join('; '), {
    obj: problems.map((p) => p.path),
    withClass: false,
  });
}

/** 403 whose body carries only `message` (spec: Product still in use). */
export function forbiddenMessageOnly(message: string): ApiError {
  return new ApiError(403, undefined, message, { body: 'message-only' });
}

/** 404 with no body at all (spec: findbyskuanduom with an unknown UOM). */
export function notFoundWithoutBody(message: string): ApiError {
  return new ApiError(404, undefined, message, { body: 'empty' });
}

/** The Java simple type name the original API reports for the `obj` values. */
export function javaClassOf(values: readonly unknown[]): string {
  if (values.every((value) => typeof value === 'string')) return 'String';
  if (values.every((value) => Number.isInteger(value))) return 'Integer';
  if (values.every((value) => typeof value === 'number')) return 'Double';
  return 'Object';
}

export function apiErrorBody(error: ApiError): Record<string, unknown> | undefined {
  if (error.body === 'empty') return undefined;
  if (error.body === 'message-only') return { message: error.message };
  const body: Record<string, unknown> = { message: error.message };
  if (error.messageKey) body.messageKey = error.messageKey;
  if (error.obj && error.obj.length > 0) body.obj = error.obj;
  body.httpStatus = String(error.status);
  if (error.withClass && error.obj && error.obj.length > 0) body.class = javaClassOf(error.obj);
  return body;
}
