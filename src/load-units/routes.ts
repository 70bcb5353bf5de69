import type { Request, Response } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { hrefOf } from '../http/links.js';
import { described } from '../openapi/described.js';
import { PLAIN_LIST, SINGLE_RESOURCE } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { MessageKeys as MasterDataKeys } from '../master-data/messages.js';
import type { z } from '../openapi/zod.js';
import { LoadUnitMessageKeys } from './messages.js';
import {
  divideFormSchema,
  divideJsonSchema,
  loadUnitKeyParamsSchema,
  lockChangeSchema,
  putProductIntoSchema,
  transportUnitParamsSchema,
  type DivideInput,
} from './schemas.js';
import {
  changeLoadUnitLock,
  divideTransportUnit,
  getLoadUnit,
  listLoadUnitsOfTransportUnit,
  putProductIntoLoadUnit,
} from './service.js';
import { loadUnitResource, loadUnitView } from './view.js';

const TAGS = ['LoadUnits'];
const VALIDATION = 'core.validation.error';
const jsonBody = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

/** D16: form fields are text and parsed; a JSON body is typed strictly (D0). A missing body names every field. */
function parseDivide(req: Request): DivideInput {
  const body: unknown = req.body ?? {};
  return req.is('application/x-www-form-urlencoded')
    ? parseInput(divideFormSchema, body)
    : parseInput(divideJsonSchema, body);
}

/** Spec part 4 "LoadUnits" and D16, D17. lu-findpuinlu belongs to the packaging-unit feature. */
export const addLoadUnitRoutes: AddFeatureRoutes = (routes, { pool, config }) => {
  routes.add({
    method: 'POST',
    path: '/v1/transport-unit',
    consumes: ['form', 'json'],
    handler: async (req: Request, res: Response) => {
      const input = parseDivide(req);
      await withTransaction(pool, (tx) => divideTransportUnit(tx, input, req.id));
      sendNoContent(res, 201);
    },
    doc: {
      operationId: 'lu-divide',
      tags: TAGS,
      summary: 'Divide a TransportUnit into LoadUnits at positions "1" … "parts"',
      request: {
        body: {
          content: {
            'application/x-www-form-urlencoded': { schema: divideFormSchema },
            'application/json': { schema: divideJsonSchema },
          },
        },
      },
      responses: {
        201: described('Divided; no body'),
        400: described('A field is missing or invalid', [VALIDATION]),
        409: described('Already divided into several LoadUnits', [LoadUnitMessageKeys.alreadyDivided]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/load-units/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(loadUnitKeyParamsSchema, req.params, 'path');
      const { loadUnit, product } = await getLoadUnit(pool, pKey);
      sendJson(res, 200, loadUnitResource(loadUnit, product, hrefOf(req)));
    },
    doc: {
      operationId: 'lu-findbypkey',
      tags: TAGS,
      summary: 'One LoadUnit by its persistent key, with its Product',
      request: { params: loadUnitKeyParamsSchema },
      responses: {
        200: described('The LoadUnit'),
        404: described('Unknown', [LoadUnitMessageKeys.pKeyNotExists]),
      },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/load-units/:pKey',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(loadUnitKeyParamsSchema, req.params, 'path');
      const input = parseInput(putProductIntoSchema, req.body ?? {});
      await withTransaction(pool, (tx) => putProductIntoLoadUnit(tx, pKey, input, config.mixedLoadUnits, req.id));
      sendNoContent(res, 200);
    },
    doc: {
      operationId: 'lu-putproductinto',
      tags: TAGS,
      summary: 'Assign a Product to the LoadUnit',
      request: { params: loadUnitKeyParamsSchema, body: jsonBody(putProductIntoSchema) },
      responses: {
        200: described('Assigned; no body'),
        400: described('Invalid, baseUnit of another kind, or another Product there (D17)', [
          VALIDATION,
          LoadUnitMessageKeys.alreadyAssigned,
        ]),
        404: described('Unknown LoadUnit or SKU', [LoadUnitMessageKeys.pKeyNotExists, 'not.found']),
      },
    },
  });

  routes.add({
    method: 'PATCH',
    path: '/v1/load-units/:pKey',
    consumes: ['json'],
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(loadUnitKeyParamsSchema, req.params, 'path');
      const { locked } = parseInput(lockChangeSchema, req.body ?? {});
      const { loadUnit, product } = await withTransaction(pool, (tx) => changeLoadUnitLock(tx, pKey, locked, req.id));
      sendJson(res, 200, loadUnitResource(loadUnit, product, hrefOf(req)));
    },
    doc: {
      tags: TAGS,
      summary: 'Lock the LoadUnit for allocation, or release it',
      request: { params: loadUnitKeyParamsSchema, body: jsonBody(lockChangeSchema) },
      responses: {
        200: described('The LoadUnit'),
        400: described('locked is missing or not a boolean', [VALIDATION]),
        404: described('Unknown', [LoadUnitMessageKeys.pKeyNotExists]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/transport-units/:transportUnitBK/load-units',
    produces: PLAIN_LIST,
    handler: async (req: Request, res: Response) => {
      const { transportUnitBK } = parseInput(transportUnitParamsSchema, req.params, 'path');
      const loadUnits = await listLoadUnitsOfTransportUnit(pool, transportUnitBK);
      sendJson(
        res,
        200,
        loadUnits.map(({ loadUnit, product }) => loadUnitView(loadUnit, product)),
      );
    },
    doc: {
      tags: TAGS,
      summary: "The TransportUnit's LoadUnits, by position",
      request: { params: transportUnitParamsSchema },
      responses: {
        200: described('application/json array of LoadUnits'),
        404: described('Unknown TransportUnit', [MasterDataKeys.transportUnitBkNotExists]),
      },
    },
  });
};
