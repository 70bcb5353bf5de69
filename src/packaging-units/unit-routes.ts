import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { PLAIN_LIST, SINGLE_RESOURCE } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { movementView } from '../ledger/view.js';
import { deleteUnitByPKey, releaseUnit } from './change-service.js';
import { findMovements, findUnitByPKey } from './find-service.js';
import { sendUnit } from './render.js';
import { packagingUnitKeySchema } from './schemas.js';
import { actorOf } from './stock.js';

const tags = ['PackagingUnits'];

/** Operations on one PackagingUnit addressed by its pKey (D20, D22, D24). */
export const addPackagingUnitKeyRoutes: AddFeatureRoutes = (routes, { pool }) => {
  routes.add({
    method: 'GET',
    path: '/v1/packaging-units/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      await sendUnit(pool, req, res, await findUnitByPKey(pool, pKey));
    },
    doc: {
      operationId: 'packaging-units-findbypkey',
      tags,
      summary: 'One PackagingUnit',
      request: { params: packagingUnitKeySchema },
      responses: { 200: { description: 'HAL' }, 404: { description: 'owms.wms.inv.pu.pKeyNotExists' } },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/v1/packaging-units/:pKey',
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      await withTransaction(pool, (tx) => deleteUnitByPKey(tx, pKey, actorOf(req)));
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-deletebypkey',
      tags,
      summary: 'Delete one PackagingUnit',
      request: { params: packagingUnitKeySchema },
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'owms.wms.inv.pu.pKeyNotExists' },
        409: { description: 'owms.wms.inv.pu.reserved' },
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/v1/packaging-units/:pKey/release',
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      const unit = await withTransaction(pool, (tx) => releaseUnit(tx, pKey, actorOf(req)));
      await sendUnit(pool, req, res, unit);
    },
    doc: {
      operationId: 'packaging-units-releasepu',
      tags,
      summary: 'Make a LOCKED unit AVAILABLE again',
      request: { params: packagingUnitKeySchema },
      responses: { 200: { description: 'The unit' }, 404: { description: 'owms.wms.inv.pu.pKeyNotExists' } },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/packaging-units/:pKey/movements',
    produces: PLAIN_LIST,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      sendJson(res, 200, (await findMovements(pool, pKey)).map(movementView));
    },
    doc: {
      operationId: 'packaging-units-movements',
      tags,
      summary: "A unit's stock movements, newest first",
      request: { params: packagingUnitKeySchema },
      responses: { 200: { description: 'Ledger rows' }, 404: { description: 'owms.wms.inv.pu.pKeyNotExists' } },
    },
  });
};
