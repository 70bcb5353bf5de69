import type { ZodType } from 'zod';
import { HAL_JSON, JSON_TYPE } from '../http/media-types.js';
import { z } from './zod.js';

/** Spec part 7, "API declined": business and validation failures (D6), always `application/hal+json`. */
export const apiErrorSchema = z
  .object({
    message: z.string(),
    messageKey: z.string().optional(),
    obj: z.array(z.unknown()).optional(),
    httpStatus: z.string(),
    class: z.string().optional(),
  })
  .strict()
  .openapi('ApiDeclinedError', { description: 'An error of the API logic (spec part 7, API declined errors)' });

/** Spec part 7, "server declined": refused before the API logic (token, routing, negotiation, body), `application/json`. */
export const serverErrorSchema = z
  .object({
    timestamp: z.number().int(),
    status: z.number().int(),
    error: z.string(),
    exception: z.string(),
    message: z.string(),
    path: z.string(),
  })
  .strict()
  .openapi('ServerDeclinedError', { description: 'Refused before the API logic (spec part 7, server declined)' });

/** The 403 of a Product still in use: only `message` (spec part 7). */
export const messageOnlyErrorSchema = z
  .object({ message: z.string() })
  .strict()
  .openapi('MessageOnlyError', { description: 'A refusal that carries only its message' });

export interface HeaderDoc {
  readonly description: string;
  readonly required?: boolean;
  /** A string unless said otherwise. */
  readonly schema?: { readonly type: 'string' | 'integer' };
}

/** One status an operation answers: its body per media type (none: no body) and its headers. */
export interface ResponseDoc {
  readonly description: string;
  readonly content?: Readonly<Record<string, ZodType>>;
  readonly headers?: Readonly<Record<string, HeaderDoc>>;
  /**
   * The status is sometimes answered without a body although it has one otherwise (e.g. D11's 404 of a UOM): the
   * document declares it without `content` (see declareOptionalBodies).
   */
  readonly bodyOptional?: boolean;
}

/** A response whose body is `schema` in each of the media types. */
export function body(
  description: string,
  schema: ZodType,
  mediaTypes: readonly string[],
  headers?: ResponseDoc['headers'],
): ResponseDoc {
  return { description, content: Object.fromEntries(mediaTypes.map((type) => [type, schema])), headers };
}

export function noBody(description: string, headers?: ResponseDoc['headers']): ResponseDoc {
  return { description, headers };
}

/** An API-declined error; `keys` names the message keys a client can meet. */
export function apiError(description: string, keys: readonly string[] = []): ResponseDoc {
  const text = keys.length > 0 ? `${description}: ${keys.join(', ')}` : description;
  return { description: text, content: { [HAL_JSON]: apiErrorSchema } };
}

export function serverError(description: string, headers?: ResponseDoc['headers']): ResponseDoc {
  return { description, content: { [JSON_TYPE]: serverErrorSchema }, headers };
}

export function messageOnlyError(description: string): ResponseDoc {
  return { description, content: { [HAL_JSON]: messageOnlyErrorSchema } };
}

/** Two declarations of one status as one: either body may come, with the headers of both. */
export function mergeResponses(first: ResponseDoc, second: ResponseDoc): ResponseDoc {
  const content: Record<string, ZodType> = { ...second.content, ...first.content };
  for (const [type, schema] of Object.entries(second.content ?? {})) {
    const other = first.content?.[type];
    if (other && other !== schema) content[type] = z.union([other, schema]);
  }
  const headers = { ...second.headers, ...first.headers };
  return {
    description:
      first.description === second.description ? first.description : `${first.description}; or ${second.description}`,
    ...(Object.keys(content).length > 0 && { content }),
    ...(Object.keys(headers).length > 0 && { headers }),
    ...((first.bodyOptional || second.bodyOptional || !first.content !== !second.content) && { bodyOptional: true }),
  };
}

/** Marks a response in the generated document whose `content` declareOptionalBodies moves aside. */
export const BODY_OPTIONAL = 'x-body-optional';
/** Where the bodies a status may come with stay, for the test suite's response check (test/support/contract.ts). */
export const OPTIONAL_CONTENT = 'x-optional-content';

interface GeneratedResponse {
  content?: unknown;
  [BODY_OPTIONAL]?: boolean;
  [OPTIONAL_CONTENT]?: unknown;
}

/**
 * A status answered sometimes without a body is declared without `content`, its bodies kept under
 * OPTIONAL_CONTENT. Standard tools (Prism's proxy validation) hold an answer of a status with `content` to one of its
 * media types, which an empty answer without Content-Type never matches, and take a status without `content` as one
 * whose body they leave unchecked (stoplightio/prism#774). Run on the generated document: only its `content` has the
 * zod schemas converted to JSON Schema.
 */
export function declareOptionalBodies(document: { paths?: object }): void {
  for (const item of Object.values(document.paths ?? {}) as Record<string, { responses?: object }>[]) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {}) as GeneratedResponse[]) {
        if (response[BODY_OPTIONAL] !== true) continue;
        delete response[BODY_OPTIONAL];
        response[OPTIONAL_CONTENT] = response.content;
        delete response.content;
      }
    }
  }
}
