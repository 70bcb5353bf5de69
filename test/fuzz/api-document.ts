import { servedApiDocument } from '../support/contract-document.js';

/** The parts of the service's OpenAPI 3.1 document (GET /v3/api-docs) that the fuzzing reads. */
export type Schema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}

interface OperationObject {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface ApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface Operation {
  /** `GET /v1/products/{pKey}`: what test names and reports call it. */
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly pathParameters: readonly string[];
  readonly queryParameters: readonly { name: string; required: boolean; schema: Schema }[];
  /** Request bodies by media type (`application/json`, `application/x-www-form-urlencoded`). */
  readonly bodies: readonly { mediaType: string; schema: Schema }[];
}

/** The served document (GET /v3/api-docs), read as far as the fuzzing needs it. */
export async function loadApiDocument(): Promise<ApiDocument> {
  return (await servedApiDocument()) as ApiDocument;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export function operationsOf(document: ApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const parameters = operation.parameters ?? [];
      const declaredInPath = [...path.matchAll(/\{(\w+)\}/g)].map((found) => found[1]!);
      operations.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParameters: declaredInPath,
        queryParameters: parameters
          .filter((parameter) => parameter.in === 'query')
          .map((parameter) => ({
            name: parameter.name,
            required: parameter.required === true,
            schema: parameter.schema ?? {},
          })),
        bodies: Object.entries(operation.requestBody?.content ?? {}).map(([mediaType, content]) => ({
          mediaType,
          schema: content.schema ?? {},
        })),
      });
    }
  }
  return operations;
}

/** Follows `#/components/schemas/…` references. */
export function dereference(document: ApiDocument, schema: Schema): Schema {
  let current = schema;
  for (let depth = 0; typeof current.$ref === 'string' && depth < 16; depth += 1) {
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = document.components?.schemas?.[name];
    if (!target) throw new Error(`unresolvable $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** The component name a schema refers to (`PositiveQuantity`), if it is a reference. */
export function referenceName(schema: Schema): string | undefined {
  return typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
}
