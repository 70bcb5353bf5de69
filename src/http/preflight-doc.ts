import { body, noBody, serverError, type ResponseDoc } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { ALLOWED_HEADERS, PREFLIGHT_MAX_AGE_SECONDS } from './cors.js';

/** The OpenAPI tag of the preflights. */
export const PREFLIGHT_TAG = 'CORS';

/**
 * What OPTIONS on a path of the service answers, for the OpenAPI document (the route table declares it for each
 * path): D33's preflight, or, when it is none, Express's list of the path's methods behind authentication.
 */
export const PREFLIGHT_DOC = {
  summary: 'CORS preflight: what a page of a listed origin may send to this path (D33)',
  description:
    'Answered 204 before authentication when Origin is one of CORS_ALLOWED_ORIGINS and ' +
    'Access-Control-Request-Method is sent, as a browser does; otherwise the request goes the usual way.',
  headers: z.object({
    Origin: z.string().optional().openapi({ description: "The page's origin, one of CORS_ALLOWED_ORIGINS" }),
    'Access-Control-Request-Method': z
      .string()
      .optional()
      .openapi({ description: 'The method the page means to use: with a listed Origin, it makes this a preflight' }),
    'Access-Control-Request-Headers': z
      .string()
      .optional()
      .openapi({ description: 'The headers the page means to send' }),
  }),
  responses: {
    204: noBody('The preflight of a listed origin; no token needed', {
      'Access-Control-Allow-Methods': {
        description: "This path's methods, HEAD beside GET",
        schema: { type: 'string' },
      },
      'Access-Control-Allow-Headers': {
        description: `The headers a page may send: ${ALLOWED_HEADERS}`,
        schema: { type: 'string' },
      },
      'Access-Control-Max-Age': {
        description: `Seconds a browser may keep the answer: ${PREFLIGHT_MAX_AGE_SECONDS}`,
        schema: { type: 'integer' },
      },
    }),
    200: body('No preflight of a listed origin, with a token: the methods of this path', z.string(), ['text/plain'], {
      Allow: { description: "This path's methods", schema: { type: 'string' } },
    }),
    401: serverError('No preflight of a listed origin, and no valid bearer token', {
      'WWW-Authenticate': { description: 'Bearer' },
    }),
  } satisfies Record<number, ResponseDoc>,
};

interface Parameter {
  readonly name?: string;
  readonly in?: string;
}

interface GeneratedDocument {
  paths?: Record<string, { options?: { tags?: string[]; parameters?: object[]; responses?: object } }>;
  components?: { responses?: Record<string, object>; parameters?: Record<string, object> };
}

/**
 * The preflight answers and reads the same on every path: its responses and header parameters are declared once
 * under `components` and referenced from each path, instead of repeated some forty times. Run on the generated
 * document, whose parts are JSON by then.
 */
export function sharePreflightDeclarations(document: GeneratedDocument): void {
  const responses: Record<string, object> = {};
  const parameters: Record<string, object> = {};
  for (const item of Object.values(document.paths ?? {})) {
    const preflight = item.options;
    if (!preflight?.tags?.includes(PREFLIGHT_TAG)) continue;
    preflight.parameters = preflight.parameters?.map((parameter) => {
      const { name, in: place } = parameter as Parameter;
      if (place !== 'header' || name === undefined) return parameter;
      parameters[name] ??= parameter;
      return { $ref: `#/components/parameters/${name}` };
    });
    preflight.responses = Object.fromEntries(
      Object.entries(preflight.responses ?? {}).map(([status, response]) => {
        const name = `Preflight${status}`;
        responses[name] ??= response as object;
        return [status, { $ref: `#/components/responses/${name}` }];
      }),
    );
  }
  document.components = {
    ...document.components,
    responses: { ...document.components?.responses, ...responses },
    parameters: { ...document.components?.parameters, ...parameters },
  };
}
