import type { Request, Response } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { halList, halListSchema, LIST_WITH_HAL } from '../http/hal-list.js';
import { href, hrefOf } from '../http/links.js';
import { HAL_JSON, JSON_TYPE, SINGLE_RESOURCE } from '../http/media-types.js';
import { linkNextPage, NEXT_PAGE_HEADER, nextPageHref, pageQuerySchema } from '../http/pagination.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { ETAG_HEADER, requireMatch, sendTagged } from '../http/validators.js';
import { MessageKeys as MasterDataKeys } from '../master-data/messages.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
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
  type LoadUnitCheck,
} from './service.js';
import {
  loadUnitResource,
  loadUnitResourceSchema,
  loadUnitSchema,
  loadUnitsOfTransportUnitPath,
  loadUnitVersion,
  loadUnitView,
} from './view.js';

const TAGS = ['LoadUnits'];
const LOAD_UNITS_REL = 'load-units';

const notFound = apiError('Unknown LoadUnit', [LoadUnitMessageKeys.pKeyNotExists]);

/** D16: form fields are text and parsed; a JSON body is typed strictly (D0). A missing body names every field. */
function parseDivide(req: Request): DivideInput {
  const body: unknown = req.body ?? {};
  return req.is('application/x-www-form-urlencoded')
    ? parseInput(divideFormSchema, body)
    : parseInput(divideJsonSchema, body);
}

/** Spec part 4 "LoadUnits" and D16, D17. lu-findpuinlu belongs to the packaging-unit feature. */
/** D40: the If-Match check of a LoadUnit write against the LoadUnit as locked; none without the header. */
const matching = (req: Request): LoadUnitCheck =>
  req.headers['if-match'] === undefined
    ? undefined
    : ({ loadUnit, product }) => requireMatch(req, SINGLE_RESOURCE, loadUnitVersion(loadUnit, product));

export const addLoadUnitRoutes: AddFeatureRoutes = (routes, { pool, reads, config }) => {
  routes.add({
    method: 'POST',
    path: '/v1/transport-unit',
    consumes: ['form', 'json'],
    handler: async (req: Request, res: Response) => {
      const input = parseDivide(req);
      await withTransaction(pool, (tx) => divideTransportUnit(tx, input, req.id), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res, 201);
    },
    doc: {
      operationId: 'lu-divide',
      tags: TAGS,
      summary: 'Divide a TransportUnit into LoadUnits at positions "1" … "parts"',
      // OpenAPI reads a form field as the text of its schema's value, so one schema describes both bodies.
      request: { body: divideJsonSchema },
      responses: {
        201: noBody('Divided; no body'),
        409: apiError('Already divided into several LoadUnits', [LoadUnitMessageKeys.alreadyDivided]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/load-units/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(loadUnitKeyParamsSchema, req.params, 'path');
      const { loadUnit, product } = await reads.run((db) => getLoadUnit(db, pKey));
      sendTagged(res, loadUnitVersion(loadUnit, product), loadUnitResource(loadUnit, product, hrefOf(req)));
    },
    doc: {
      operationId: 'lu-findbypkey',
      validators: 'read',
      tags: TAGS,
      summary: 'One LoadUnit by its persistent key, with its Product',
      request: { params: loadUnitKeyParamsSchema },
      responses: {
        200: body('The LoadUnit', loadUnitResourceSchema, SINGLE_RESOURCE),
        404: notFound,
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
      await withTransaction(
        pool,
        (tx) => putProductIntoLoadUnit(tx, pKey, input, config.mixedLoadUnits, req.id, matching(req)),
        { participant: req.transactionParticipant },
      );
      sendNoContent(res, 200);
    },
    doc: {
      operationId: 'lu-putproductinto',
      validators: 'write',
      tags: TAGS,
      summary: 'Assign a Product to the LoadUnit',
      description: "A baseUnit of another kind than the Product's is a 400 core.validation.error.",
      request: { params: loadUnitKeyParamsSchema, body: putProductIntoSchema },
      responses: {
        200: noBody('Assigned; no body'),
        400: apiError('Another Product is assigned or carried (D17)', [LoadUnitMessageKeys.alreadyAssigned]),
        404: apiError('Unknown LoadUnit or SKU', [LoadUnitMessageKeys.pKeyNotExists, 'not.found']),
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
      const { loadUnit, product } = await withTransaction(
        pool,
        (tx) => changeLoadUnitLock(tx, pKey, locked, req.id, matching(req)),
        { participant: req.transactionParticipant },
      );
      sendTagged(res, loadUnitVersion(loadUnit, product), loadUnitResource(loadUnit, product, hrefOf(req)));
    },
    doc: {
      operationId: 'lu-changelock',
      validators: 'write',
      tags: TAGS,
      summary: 'Lock the LoadUnit for allocation, or release it',
      request: { params: loadUnitKeyParamsSchema, body: lockChangeSchema },
      responses: {
        200: body('The LoadUnit', loadUnitResourceSchema, SINGLE_RESOURCE, ETAG_HEADER),
        404: notFound,
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/transport-units/:transportUnitBK/load-units',
    produces: LIST_WITH_HAL,
    handler: async (req: Request, res: Response) => {
      const { transportUnitBK } = parseInput(transportUnitParamsSchema, req.params, 'path');
      const query = parseInput(pageQuerySchema, req.query, 'query');
      const page = await reads.run((db) => listLoadUnitsOfTransportUnit(db, transportUnitBK, query));
      const next = nextPageHref(req, page, query.limit);
      linkNextPage(res, next);
      if (req.mediaType === HAL_JSON) {
        const items = page.items.map(({ loadUnit, product }) => loadUnitResource(loadUnit, product, hrefOf(req)));
        const self = href(req, loadUnitsOfTransportUnitPath(transportUnitBK));
        sendJson(res, 200, halList(self, LOAD_UNITS_REL, items, next));
      } else {
        sendJson(
          res,
          200,
          page.items.map(({ loadUnit, product }) => loadUnitView(loadUnit, product)),
        );
      }
    },
    doc: {
      operationId: 'lu-findontu',
      tags: TAGS,
      summary: "The TransportUnit's LoadUnits, by position, a page at a time",
      request: { params: transportUnitParamsSchema, query: pageQuerySchema },
      responses: {
        200: {
          description: 'The LoadUnits: a plain array, or HAL when application/hal+json is asked for',
          headers: NEXT_PAGE_HEADER,
          content: {
            [JSON_TYPE]: z.array(loadUnitSchema),
            [HAL_JSON]: halListSchema(LOAD_UNITS_REL, loadUnitResourceSchema),
          },
        },
        404: apiError('Unknown TransportUnit', [MasterDataKeys.transportUnitBkNotExists]),
      },
    },
  });
};
