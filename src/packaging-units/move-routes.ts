import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { SINGLE_RESOURCE } from '../http/media-types.js';
import { sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import {
  moveBetweenLocationsSchema,
  moveFromLoadUnitSchema,
  moveToLoadUnitSchema,
  moveUnitSchema,
} from './move-schemas.js';
import { moveBetweenLocations, moveFromLoadUnit, moveLocationToLoadUnit, moveUnit } from './move-service.js';
import { sendUnit } from './render.js';
import { loadUnitAddressSchema, packagingUnitKeySchema } from './schemas.js';
import { actorOf } from './stock.js';

const tags = ['PackagingUnits: moves'];
const moveErrors = {
  400: { description: 'core.validation.error; owms.wms.inv.lu.alreadyAssigned at the target' },
  404: { description: 'owms.wms.inv.pu.noPUOnLocation, owms.wms.inv.lu.onTuNotExists, unknown Location or SKU' },
  409: { description: 'owms.wms.inv.pu.reserved: everything there is reserved' },
};

/** D21: every move is one transaction; the sum of a Product's quantities is the same before and after. */
export const addMoveRoutes: AddFeatureRoutes = (routes, { pool, config }) => {
  // Registered before PUT /v1/packaging-units/:pKey so these names are never taken for a pKey.
  routes.add({
    method: 'PUT',
    path: '/v1/packaging-units/move-between-locations',
    consumes: ['json'],
    handler: async (req, res) => {
      const items = parseInput(moveBetweenLocationsSchema, req.body);
      await withTransaction(pool, (tx) => moveBetweenLocations(tx, items, actorOf(req)));
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movebetweenlocations',
      tags,
      summary: 'Move quantities of Products from one Location to another',
      request: { body: { content: { 'application/json': { schema: moveBetweenLocationsSchema } } } },
      responses: { 204: { description: 'Moved' }, ...moveErrors },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/packaging-units/move-to-load-unit',
    consumes: ['json'],
    handler: async (req, res) => {
      const input = parseInput(moveToLoadUnitSchema, req.body);
      await withTransaction(pool, (tx) => moveLocationToLoadUnit(tx, input, actorOf(req), config.mixedLoadUnits));
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movefromlocationtoloadunit',
      tags,
      summary: 'Move a quantity of a Product from a Location (by ERP code) into a LoadUnit',
      request: { body: { content: { 'application/json': { schema: moveToLoadUnitSchema } } } },
      responses: { 204: { description: 'Moved' }, ...moveErrors },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/packaging-units/:pKey',
    consumes: ['json'],
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      const input = parseInput(moveUnitSchema, req.body);
      const unit = await withTransaction(pool, (tx) => moveUnit(tx, pKey, input, actorOf(req), config.mixedLoadUnits));
      await sendUnit(pool, req, res, unit);
    },
    doc: {
      operationId: 'packaging-units-update',
      tags,
      summary: 'Move a PackagingUnit (or part of it) to a Location or into another LoadUnit',
      request: {
        params: packagingUnitKeySchema,
        body: { content: { 'application/json': { schema: moveUnitSchema } } },
      },
      responses: { 200: { description: 'The unit at the target (a new unit when only part moved)' }, ...moveErrors },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/transport-units/:transportUnitBK/load-units/:luPos/packaging-units',
    consumes: ['json'],
    handler: async (req, res) => {
      const address = parseInput(loadUnitAddressSchema, req.params, 'path');
      const input = parseInput(moveFromLoadUnitSchema, req.body);
      await withTransaction(pool, (tx) => moveFromLoadUnit(tx, address, input, actorOf(req), config.mixedLoadUnits));
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movepuquantity',
      tags,
      summary: 'Move a quantity of a Product out of a LoadUnit into another LoadUnit or onto a Location',
      request: {
        params: loadUnitAddressSchema,
        body: { content: { 'application/json': { schema: moveFromLoadUnitSchema } } },
      },
      responses: { 204: { description: 'Moved' }, ...moveErrors },
    },
  });
};
