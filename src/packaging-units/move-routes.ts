import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { bulkItemsOf, readBulk, type BulkShape } from '../http/json-bulk.js';
import { SINGLE_RESOURCE } from '../http/media-types.js';
import { sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import {
  moveBetweenLocationSchema,
  moveBetweenLocationsSchema,
  moveFromLoadUnitSchema,
  moveToLoadUnitSchema,
  moveUnitSchema,
  MAX_MOVES,
  type MoveBetweenLocationsInput,
} from './move-schemas.js';
import { moveBetweenLocations, moveFromLoadUnit, moveLocationToLoadUnit, moveUnit } from './move-service.js';
import { requireUnitMatch, sendUnit } from './render.js';
import { loadUnitAddressSchema, packagingUnitKeySchema } from './schemas.js';
import { actorOf } from './stock.js';
import { packagingUnitResourceSchema } from './view.js';

const tags = ['PackagingUnits: moves'];
const reserved = apiError('Everything there is reserved (D21)', ['owms.wms.inv.pu.reserved']);
const intoLoadUnit = apiError('The target LoadUnit holds another Product (D17)', ['owms.wms.inv.lu.alreadyAssigned']);
const notThere = 'owms.wms.inv.pu.noPUOnLocation';
const moveList: BulkShape<MoveBetweenLocationsInput[number]> = {
  item: moveBetweenLocationSchema,
  body: moveBetweenLocationsSchema,
  maxItems: MAX_MOVES,
};

/** D21: every move is one transaction; the sum of a Product's quantities is the same before and after. */
export const addMoveRoutes: AddFeatureRoutes = (routes, { pool, config }) => {
  // Registered before PUT /v1/packaging-units/:pKey so these names are never taken for a pKey.
  routes.add({
    method: 'PUT',
    path: '/v1/packaging-units/move-between-locations',
    consumes: ['json'],
    bulk: true,
    readJson: (pieces, itemLimit, _req, share) => readBulk(pieces, itemLimit, moveList, share),
    growsShare: true,
    handler: async (req, res) => {
      const { items } = bulkItemsOf(req, moveList);
      await withTransaction(pool, (tx) => moveBetweenLocations(tx, items, actorOf(req)), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movebetweenlocations',
      tags,
      summary: 'Move quantities of Products from one Location to another',
      request: { body: moveBetweenLocationsSchema },
      responses: {
        204: noBody('Moved'),
        404: apiError('An unknown SKU or Location, or none of the Product at the source', [
          'not.found',
          'owms.wms.inv.loc.idNotExists',
          notThere,
        ]),
        409: reserved,
      },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/packaging-units/move-to-load-unit',
    consumes: ['json'],
    handler: async (req, res) => {
      const input = parseInput(moveToLoadUnitSchema, req.body);
      await withTransaction(pool, (tx) => moveLocationToLoadUnit(tx, input, actorOf(req), config.mixedLoadUnits), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movefromlocationtoloadunit',
      tags,
      summary: 'Move a quantity of a Product from a Location (by ERP code) into a LoadUnit',
      request: { body: moveToLoadUnitSchema },
      responses: {
        204: noBody('Moved'),
        400: intoLoadUnit,
        404: apiError('An unknown SKU, Location or target LoadUnit, or none of the Product at the source', [
          'not.found',
          'owms.wms.inv.loc.erpCodeNotExists',
          'owms.wms.inv.lu.onTuNotExists',
          notThere,
        ]),
        409: reserved,
      },
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
      const unit = await withTransaction(
        pool,
        (tx) =>
          moveUnit(tx, pKey, input, actorOf(req), config.mixedLoadUnits, (locked) => requireUnitMatch(tx, req, locked)),
        { participant: req.transactionParticipant },
      );
      await sendUnit(pool, req, res, unit);
    },
    doc: {
      operationId: 'packaging-units-update',
      validators: 'write',
      tags,
      summary: 'Move a PackagingUnit (or part of it) to a Location or into another LoadUnit',
      request: {
        params: packagingUnitKeySchema,
        body: moveUnitSchema,
      },
      responses: {
        200: body(
          'The unit at the target (a new unit when only part moved)',
          packagingUnitResourceSchema,
          SINGLE_RESOURCE,
        ),
        400: intoLoadUnit,
        404: apiError('An unknown unit, target Location or target LoadUnit', [
          'owms.wms.inv.pu.pKeyNotExists',
          'owms.wms.inv.loc.idNotExists',
          'owms.wms.inv.loc.erpCodeNotExists',
          'owms.wms.inv.lu.onTuNotExists',
        ]),
        409: reserved,
      },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/transport-units/:transportUnitBK/load-units/:luPos/packaging-units',
    consumes: ['json'],
    handler: async (req, res) => {
      const address = parseInput(loadUnitAddressSchema, req.params, 'path');
      const input = parseInput(moveFromLoadUnitSchema, req.body);
      await withTransaction(pool, (tx) => moveFromLoadUnit(tx, address, input, actorOf(req), config.mixedLoadUnits), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-movepuquantity',
      tags,
      summary: 'Move a quantity of a Product out of a LoadUnit into another LoadUnit or onto a Location',
      request: {
        params: loadUnitAddressSchema,
        body: moveFromLoadUnitSchema,
      },
      responses: {
        204: noBody('Moved'),
        400: intoLoadUnit,
        404: apiError('An unknown SKU, LoadUnit or target Location, or none of the Product in the LoadUnit', [
          'not.found',
          'owms.wms.inv.lu.onTuNotExists',
          'owms.wms.inv.loc.idNotExists',
          notThere,
        ]),
        409: reserved,
      },
    },
  });
};
