import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { PLAIN_LIST } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { actorOf } from '../packaging-units/stock.js';
import { allocationQuerySchema, allocationRequestSchema, reservationParamsSchema } from './schemas.js';
import { allocate, releaseReservation } from './service.js';
import { allocationView } from './view.js';

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
      request: {
        query: allocationQuerySchema,
        body: { content: { 'application/json': { schema: allocationRequestSchema } } },
      },
      responses: {
        200: { description: 'Where the allocated quantity lies, one element per LoadUnit' },
        400: { description: 'core.validation.error' },
        404: { description: 'not.found: unknown SKU; owms.common.common.lg.notFoundByName' },
        409: { description: 'owms.wms.inv.alloc.insufficient with allowPartial=false' },
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
      responses: { 204: { description: 'Released' }, 404: { description: 'owms.wms.inv.res.notFound' } },
    },
  });
};
