import type { Request, Response } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { href, hrefOf } from '../http/links.js';
import { described } from '../openapi/described.js';
import { SINGLE_RESOURCE } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import type { z } from '../openapi/zod.js';
import { MessageKeys } from './messages.js';
import {
  locationGroupQuerySchema,
  locationGroupsUpsertSchema,
  locationQuerySchema,
  locationsUpsertSchema,
  transportUnitCreateSchema,
  transportUnitMoveQuerySchema,
  transportUnitQuerySchema,
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
import { locationGroupResource, locationResource, transportUnitPath, transportUnitResource } from './view.js';

const TAGS = ['Master data'];
const jsonBody = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

/** D14, D15: replicas of location groups, locations and transport units. */
export const addMasterDataRoutes: AddFeatureRoutes = (routes, { pool }) => {
  routes.add({
    method: 'PUT',
    path: '/v1/location-groups',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const groups = parseInput(locationGroupsUpsertSchema, req.body);
      await withTransaction(pool, (tx) => upsertLocationGroups(tx, groups));
      sendNoContent(res);
    },
    doc: {
      tags: TAGS,
      summary: 'Create or update LocationGroups by name; parents by name, in any order',
      request: { body: jsonBody(locationGroupsUpsertSchema) },
      responses: {
        204: described('Stored'),
        400: described('Invalid, duplicate names, or a cycle', ['core.validation.error']),
        404: described('Unknown parent', [MessageKeys.locationGroupNotFoundByName]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/location-groups',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { name } = parseInput(locationGroupQuerySchema, req.query, 'query');
      sendJson(res, 200, locationGroupResource(await requireLocationGroup(pool, name), hrefOf(req)));
    },
    doc: {
      tags: TAGS,
      summary: 'Find a LocationGroup by name',
      request: { query: locationGroupQuerySchema },
      responses: {
        200: described('The LocationGroup'),
        404: described('Unknown name', [MessageKeys.locationGroupNotFoundByName]),
      },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/locations',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const locations = parseInput(locationsUpsertSchema, req.body);
      await withTransaction(pool, (tx) => upsertLocations(tx, locations));
      sendNoContent(res);
    },
    doc: {
      tags: TAGS,
      summary: 'Create or update Locations by locationId',
      request: { body: jsonBody(locationsUpsertSchema) },
      responses: {
        204: described('Stored'),
        400: described('Invalid or duplicate locationIds', ['core.validation.error']),
        404: described('Unknown locationGroupName', [MessageKeys.locationGroupNotFoundByName]),
        409: described('ERP code used by another Location', [MessageKeys.erpCodeAlreadyUsed]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/locations',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const reference = parseInput(locationQuerySchema, req.query, 'query');
      sendJson(res, 200, locationResource(await requireLocation(pool, reference), hrefOf(req)));
    },
    doc: {
      tags: TAGS,
      summary: 'Find a Location by locationId or by erpCode (exactly one of them)',
      request: { query: locationQuerySchema },
      responses: {
        200: described('The Location'),
        400: described('Neither or both parameters', ['core.validation.error']),
        404: described('Unknown', [MessageKeys.locationIdNotExists, MessageKeys.locationErpCodeNotExists]),
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/v1/transport-units',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const input = parseInput(transportUnitCreateSchema, req.body);
      const transportUnit = await withTransaction(pool, (tx) => createTransportUnit(tx, input));
      res.location(href(req, transportUnitPath(transportUnit.bk)));
      sendNoContent(res, 201);
    },
    doc: {
      tags: TAGS,
      summary: 'Create a TransportUnit on a Location, or complete one registered on the spot',
      request: { body: jsonBody(transportUnitCreateSchema) },
      responses: {
        201: described('Created; Location header'),
        400: described('A part is missing', [
          MessageKeys.transportUnitBkMissing,
          MessageKeys.transportUnitTypeMissing,
          MessageKeys.transportUnitLocationMissing,
          'core.validation.error',
        ]),
        404: described('Unknown Location', [MessageKeys.locationErpCodeNotExists, MessageKeys.locationIdNotExists]),
        409: described('Exists already', [MessageKeys.transportUnitAlreadyExists]),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/transport-units',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { bk } = parseInput(transportUnitQuerySchema, req.query, 'query');
      const { transportUnit, location } = await getTransportUnit(pool, bk);
      sendJson(res, 200, transportUnitResource(transportUnit, location, hrefOf(req)));
    },
    doc: {
      tags: TAGS,
      summary: 'Find a TransportUnit by business key',
      request: { query: transportUnitQuerySchema },
      responses: {
        200: described('The TransportUnit with its Location'),
        404: described('Unknown', [MessageKeys.transportUnitBkNotExists]),
      },
    },
  });

  routes.add({
    method: 'PATCH',
    path: '/v1/transport-units',
    handler: async (req: Request, res: Response) => {
      const { bk, newLocation } = parseInput(transportUnitMoveQuerySchema, req.query, 'query');
      await withTransaction(pool, (tx) => moveTransportUnit(tx, bk, newLocation));
      sendNoContent(res);
    },
    doc: {
      tags: TAGS,
      summary: 'Move a TransportUnit to the Location with the ERP code newLocation',
      request: { query: transportUnitMoveQuerySchema },
      responses: {
        204: described('Moved'),
        404: described('Unknown', [MessageKeys.transportUnitBkNotExists, MessageKeys.locationErpCodeNotExists]),
      },
    },
  });
};
