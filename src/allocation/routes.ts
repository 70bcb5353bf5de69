import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { PLAIN_LIST } from '../http/media-types.js';
import { href } from '../http/links.js';
import { sendJson } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { MessageKeys as MasterDataKeys } from '../master-data/messages.js';
import { apiError, body } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { actorOf } from '../packaging-units/stock.js';
import { reservationPath } from '../reservations/routes.js';
import { allocationQuerySchema, allocationRequestSchema } from './schemas.js';
import { allocate } from './service.js';
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
      const results = await withTransaction(pool, (tx) => allocate(tx, request, options, actorOf(req)), {
        participant: req.transactionParticipant,
      });
      // D32: the reservation is read, picked and issued at its own address.
      if (results[0])
        res.setHeader('Link', `<${href(req, reservationPath(results[0].reservationId))}>; rel="reservation"`);
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
          {
            Link: { description: '`<…>; rel="reservation"`: the reservation made, when anything was allocated' },
          },
        ),
        404: apiError('Unknown SKU or LocationGroup', ['not.found', MasterDataKeys.locationGroupNotFoundByName]),
        409: apiError('Not enough stock and allowPartial=false', ['owms.wms.inv.alloc.insufficient']),
      },
    },
  });
};
