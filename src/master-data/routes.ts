import type { Request, Response } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { stageBulk, stagedBulkOf, type BulkShape } from '../http/json-bulk.js';
import { href, hrefOf } from '../http/links.js';
import { SINGLE_RESOURCE } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import { locationGroupStageRow } from './location-group-stage-sql.js';
import { locationStageRow } from './location-stage-sql.js';
import { MessageKeys } from './messages.js';
import {
  locationGroupQuerySchema,
  locationGroupsUpsertSchema,
  locationGroupUpsertSchema,
  locationQuerySchema,
  locationsUpsertSchema,
  locationUpsertSchema,
  transportUnitCreateSchema,
  transportUnitMoveQuerySchema,
  transportUnitQuerySchema,
  type LocationGroupUpsert,
  type LocationUpsert,
} from './schemas.js';
import {
  createTransportUnit,
  getTransportUnit,
  moveTransportUnit,
  requireLocation,
  requireLocationGroup,
  upsertLocationGroups,
  upsertLocations,
} from './service.js';
import {
  locationGroupResource,
  locationGroupResourceSchema,
  locationResource,
  locationResourceSchema,
  transportUnitPath,
  transportUnitResource,
  transportUnitResourceSchema,
} from './view.js';

const TAGS = ['Master data'];

const locationGroupList: BulkShape<LocationGroupUpsert> = {
  item: locationGroupUpsertSchema,
  body: locationGroupsUpsertSchema,
};
const locationList: BulkShape<LocationUpsert> = { item: locationUpsertSchema, body: locationsUpsertSchema };

/** D14, D15: replicas of location groups, locations and transport units. */
export const addMasterDataRoutes: AddFeatureRoutes = (routes, { pool, reads, config }) => {
  routes.add({
    method: 'PUT',
    path: '/v1/location-groups',
    consumes: ['json'],
    bulk: true,
    readJson: (pieces, itemLimit, req) =>
      stageBulk(pieces, itemLimit, locationGroupList, locationGroupStageRow, req.res!),
    growsShare: true,
    handler: async (req: Request, res: Response) => {
      const staged = stagedBulkOf(req, locationGroupList);
      await withTransaction(pool, (tx) => upsertLocationGroups(tx, staged, config.db.statementTimeoutMs), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'location-groups-upsert',
      tags: TAGS,
      summary: 'Create or update LocationGroups by name; parents by name, in any order',
      description: 'Duplicate names and cycles are refused as invalid (400 core.validation.error).',
      request: { body: locationGroupsUpsertSchema },
      responses: {
        204: noBody('Stored'),
        404: apiError('Unknown parent', [MessageKeys.locationGroupNotFoundByName]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/location-groups',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { name } = parseInput(locationGroupQuerySchema, req.query, 'query');
      sendJson(res, 200, locationGroupResource(await reads.run((db) => requireLocationGroup(db, name)), hrefOf(req)));
    },
    doc: {
      operationId: 'location-groups-findbyname',
      tags: TAGS,
      summary: 'Find a LocationGroup by name',
      request: { query: locationGroupQuerySchema },
      responses: {
        200: body('The LocationGroup', locationGroupResourceSchema, SINGLE_RESOURCE),
        404: apiError('Unknown name', [MessageKeys.locationGroupNotFoundByName]),
      },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/locations',
    consumes: ['json'],
    bulk: true,
    readJson: (pieces, itemLimit, req) => stageBulk(pieces, itemLimit, locationList, locationStageRow, req.res!),
    growsShare: true,
    handler: async (req: Request, res: Response) => {
      const staged = stagedBulkOf(req, locationList);
      await withTransaction(pool, (tx) => upsertLocations(tx, staged, config.db.statementTimeoutMs), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'locations-upsert',
      tags: TAGS,
      summary: 'Create or update Locations by locationId',
      description: 'Duplicate locationIds are refused as invalid (400 core.validation.error).',
      request: { body: locationsUpsertSchema },
      responses: {
        204: noBody('Stored'),
        404: apiError('Unknown locationGroupName', [MessageKeys.locationGroupNotFoundByName]),
        409: apiError('ERP code used by another Location', [MessageKeys.erpCodeAlreadyUsed]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/locations',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const reference = parseInput(locationQuerySchema, req.query, 'query');
      sendJson(res, 200, locationResource(await reads.run((db) => requireLocation(db, reference)), hrefOf(req)));
    },
    doc: {
      operationId: 'locations-find',
      tags: TAGS,
      summary: 'Find a Location by locationId or by erpCode (exactly one of them)',
      description: 'Neither or both parameters: 400 core.validation.error.',
      request: { query: locationQuerySchema },
      responses: {
        200: body('The Location', locationResourceSchema, SINGLE_RESOURCE),
        404: apiError('Unknown', [MessageKeys.locationIdNotExists, MessageKeys.locationErpCodeNotExists]),
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/v1/transport-units',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const input = parseInput(transportUnitCreateSchema, req.body);
      const transportUnit = await withTransaction(pool, (tx) => createTransportUnit(tx, input), {
        participant: req.transactionParticipant,
      });
      res.location(href(req, transportUnitPath(transportUnit.bk)));
      sendNoContent(res, 201);
    },
    doc: {
      operationId: 'transport-units-create',
      tags: TAGS,
      summary: 'Create a TransportUnit on a Location, or complete one registered on the spot',
      request: { body: transportUnitCreateSchema },
      responses: {
        201: noBody('Created; no body', {
          Location: { description: 'Absolute URL of the TransportUnit', required: true, schema: { type: 'string' } },
        }),
        400: apiError('A part is missing', [
          MessageKeys.transportUnitBkMissing,
          MessageKeys.transportUnitTypeMissing,
          MessageKeys.transportUnitLocationMissing,
        ]),
        404: apiError('Unknown Location', [MessageKeys.locationErpCodeNotExists, MessageKeys.locationIdNotExists]),
        409: apiError('Exists already', [MessageKeys.transportUnitAlreadyExists]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/transport-units',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { bk } = parseInput(transportUnitQuerySchema, req.query, 'query');
      const { transportUnit, location } = await reads.run((db) => getTransportUnit(db, bk));
      sendJson(res, 200, transportUnitResource(transportUnit, location, hrefOf(req)));
    },
    doc: {
      operationId: 'transport-units-findbybk',
      tags: TAGS,
      summary: 'Find a TransportUnit by business key',
      request: { query: transportUnitQuerySchema },
      responses: {
        200: body('The TransportUnit with its Location', transportUnitResourceSchema, SINGLE_RESOURCE),
        404: apiError('Unknown', [MessageKeys.transportUnitBkNotExists]),
      },
    },
  });

  routes.add({
    method: 'PATCH',
    path: '/v1/transport-units',
    handler: async (req: Request, res: Response) => {
      const { bk, newLocation } = parseInput(transportUnitMoveQuerySchema, req.query, 'query');
      await withTransaction(pool, (tx) => moveTransportUnit(tx, bk, newLocation), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'transport-units-move',
      tags: TAGS,
      summary: 'Move a TransportUnit to the Location with the ERP code newLocation',
      request: { query: transportUnitMoveQuerySchema },
      responses: {
        204: noBody('Moved'),
        404: apiError('Unknown', [MessageKeys.transportUnitBkNotExists, MessageKeys.locationErpCodeNotExists]),
      },
    },
  });
};
