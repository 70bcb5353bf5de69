import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { PLAIN_LIST } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { MessageKeys as MasterDataKeys } from '../master-data/messages.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { actorOf } from '../packaging-units/stock.js';
import { allocationQuerySchema, allocationRequestSchema, reservationParamsSchema } from './schemas.js';
import { allocate, releaseReservation } from './service.js';
import { allocationResultSchema, allocationView } from './view.js';

const tags = ['Allocation'];

export const addAllocationRoutes: AddFeatureRoutes = (routes, { pool }) => {
  routes.add({
    method: 'POST',
    path: '/allocation/transport-units',
    consumes: ['json'],
    produces: PLAIN_LIST,
    handler: async (req, res) => {
      const query = parseInput(allocationQuerySchema, req.query, 'query');
      const request = parseInput(allocationRequestSchema, req.body);
      const options = { groupNames: query.sourceLocationGroupNames, allowPartial: query.allowPartial !== 'false' };
      const results = await withTransaction(pool, (tx) => allocate(tx, request, options, actorOf(req)));
      sendJson(res, 200, results.map(allocationView));
    },
    doc: {
      operationId: 'allocate',
      tags,
      summary: 'Reserve a quantity of a Product for picking, FEFO then FIFO',
      description:
        "A qty of another kind than the Product's baseUnit is a 400 core.validation.error. With allowPartial " +
        '(the default) a shortfall allocates what there is, possibly nothing: an empty array.',
      request: { query: allocationQuerySchema, body: allocationRequestSchema },
      responses: {
        200: body(
          'Where the allocated quantity lies, one element per LoadUnit',
          z.array(allocationResultSchema),
          PLAIN_LIST,
        ),
        404: apiError('Unknown SKU or LocationGroup', ['not.found', MasterDataKeys.locationGroupNotFoundByName]),
        409: apiError('Not enough stock and allowPartial=false', ['owms.wms.inv.alloc.insufficient']),
      },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/allocation/reservations/:reservationId',
    handler: async (req, res) => {
      const { reservationId } = parseInput(reservationParamsSchema, req.params, 'path');
      await withTransaction(pool, (tx) => releaseReservation(tx, reservationId, actorOf(req)));
      sendNoContent(res);
    },
    doc: {
      operationId: 'release-reservation',
      tags,
      summary: 'Release a reservation (idempotent)',
      request: { params: reservationParamsSchema },
      responses: {
        204: noBody('Released, or released already'),
        404: apiError('No such reservation was ever issued', ['owms.wms.inv.res.notFound']),
      },
    },
  });
};
