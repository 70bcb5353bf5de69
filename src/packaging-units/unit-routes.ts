import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { PLAIN_LIST, SINGLE_RESOURCE } from '../http/media-types.js';
import { linkNextPage, NEXT_PAGE_HEADER, nextPageHref, pageQuerySchema } from '../http/pagination.js';
import { arrayReader, plainJsonList, sendJsonList } from '../http/json-list.js';
import { sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { ETAG_HEADER } from '../http/validators.js';
import { movementSchema, movementView } from '../ledger/view.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { deleteUnitByPKey, releaseUnit } from './change-service.js';
import { findMovements, findUnitByPKey } from './find-service.js';
import { requireUnitMatch, sendUnit } from './render.js';
import { packagingUnitKeySchema } from './schemas.js';
import { actorOf } from './stock.js';
import { packagingUnitResourceSchema } from './view.js';

const tags = ['PackagingUnits'];
const unknownUnit = apiError('No such PackagingUnit', ['owms.wms.inv.pu.pKeyNotExists']);

/** Operations on one PackagingUnit addressed by its pKey (D20, D22, D24). */
export const addPackagingUnitKeyRoutes: AddFeatureRoutes = (routes, { pool, reads, outgoing }) => {
  routes.add({
    method: 'GET',
    path: '/v1/packaging-units/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      await reads.run(async (db) => sendUnit(db, req, res, await findUnitByPKey(db, pKey)));
    },
    doc: {
      operationId: 'packaging-units-findbypkey',
      validators: 'read',
      tags,
      summary: 'One PackagingUnit',
      request: { params: packagingUnitKeySchema },
      responses: { 200: body('The unit', packagingUnitResourceSchema, SINGLE_RESOURCE), 404: unknownUnit },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/v1/packaging-units/:pKey',
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      await withTransaction(
        pool,
        (tx) => deleteUnitByPKey(tx, pKey, actorOf(req), (locked) => requireUnitMatch(tx, req, locked)),
        { participant: req.transactionParticipant },
      );
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-deletebypkey',
      validators: 'write',
      tags,
      summary: 'Delete one PackagingUnit',
      request: { params: packagingUnitKeySchema },
      responses: {
        204: noBody('Deleted'),
        404: unknownUnit,
        409: apiError('The unit has reserved quantity (D22)', ['owms.wms.inv.pu.reserved']),
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/v1/packaging-units/:pKey/release',
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      const unit = await withTransaction(pool, (tx) => releaseUnit(tx, pKey, actorOf(req)), {
        participant: req.transactionParticipant,
      });
      await sendUnit(pool, req, res, unit);
    },
    doc: {
      operationId: 'packaging-units-releasepu',
      tags,
      summary: 'Make a LOCKED unit AVAILABLE again',
      request: { params: packagingUnitKeySchema },
      responses: {
        200: body('The unit, AVAILABLE', packagingUnitResourceSchema, SINGLE_RESOURCE, ETAG_HEADER),
        404: unknownUnit,
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/packaging-units/:pKey/movements',
    produces: PLAIN_LIST,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      const query = parseInput(pageQuerySchema, req.query, 'query');
      const page = await reads.run((db) => findMovements(db, pKey, query));
      linkNextPage(res, nextPageHref(req, page, query.limit));
      await sendJsonList(outgoing, req, res, 200, plainJsonList(arrayReader(page.items), movementView));
    },
    doc: {
      operationId: 'packaging-units-movements',
      tags,
      summary: "A unit's stock movements, newest first, a page at a time",
      request: { params: packagingUnitKeySchema, query: pageQuerySchema },
      responses: {
        200: body('Ledger rows, newest first', z.array(movementSchema), PLAIN_LIST, NEXT_PAGE_HEADER),
        404: apiError('No unit with that key ever existed', ['owms.wms.inv.pu.pKeyNotExists']),
      },
    },
  });
};
