import type { Request, Response } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { bulkItemsOf, readBulk, type BulkShape } from '../http/json-bulk.js';
import { href } from '../http/links.js';
import { linkNextPage, NEXT_PAGE_HEADER, nextPageHref } from '../http/pagination.js';
import { sendJsonList } from '../http/json-list.js';
import { JSON_TYPE, NDJSON, PACKAGING_UNIT_LIST } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { apiError, noBody, serverError } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { deleteOnLocation, reportProblem } from './change-service.js';
import { createInLoadUnit, createOnLocations } from './create-service.js';
import { intakeUnits } from './intake.js';
import {
  DEFAULT_AMOUNT,
  findUnitsAtLoadUnitPosition,
  findUnitsInLoadUnit,
  findUnitsOnTransportUnit,
  searchUnits,
} from './find-service.js';
import { UNIT_LIST_WITH_HAL, unitList, unitListResponse } from './render.js';
import {
  createInLoadUnitBodySchema,
  createInLoadUnitQuerySchema,
  deleteOnLocationSchema,
  intakeInLoadUnitSchema,
  intakeOnLocationSchema,
  intakeResultSchema,
  loadUnitAddressSchema,
  MAX_NEW_UNITS,
  newPackagingUnitOnLocationSchema,
  newPackagingUnitSchema,
  newPackagingUnitsSchema,
  type NewPackagingUnit,
  type NewPackagingUnitOnLocation,
  packagingUnitKeySchema,
  packagingUnitSearchSchema,
  reportProblemSchema,
} from './schemas.js';
import { selectUnitsByIds } from './sql.js';
import { packagingUnitSchema } from './view.js';
import { actorOf } from './stock.js';

const transportUnitParams = z.object({ transportUnitBK: z.string().min(1) });
const onLocationList = z.array(newPackagingUnitOnLocationSchema).min(1).max(MAX_NEW_UNITS);
/** One unit on a Location, or a list of them (issue 39: read as it arrives). */
const onLocationBody: BulkShape<NewPackagingUnitOnLocation> = {
  item: newPackagingUnitOnLocationSchema,
  body: onLocationList,
  maxItems: MAX_NEW_UNITS,
  single: true,
};
/** `{packagingUnits: [...]}` as the spec says, or the bare list. */
const inLoadUnitBody: BulkShape<NewPackagingUnit> = {
  item: newPackagingUnitSchema,
  body: newPackagingUnitsSchema,
  maxItems: MAX_NEW_UNITS,
  within: { key: 'packagingUnits', body: createInLoadUnitBodySchema },
};
const tags = ['PackagingUnits'];
/** D8, D18: the first created unit. */
const createdHeaders = {
  Location: { description: 'The first created PackagingUnit', required: true, schema: { type: 'string' } },
} as const;

/** The JSON create's list of units, or an NDJSON intake's count (D35), which has no Location. */
const createdUnits = unitListResponse('The created units; for NDJSON how many were created', PACKAGING_UNIT_LIST);
const createdOrTakenInResponse = {
  ...createdUnits,
  content: { ...createdUnits.content, [JSON_TYPE]: z.union([z.array(packagingUnitSchema), intakeResultSchema]) },
  headers: { Location: { ...createdHeaders.Location, required: false } },
};

export const addPackagingUnitRoutes: AddFeatureRoutes = (routes, { pool, reads, outgoing, config, imports }) => {
  const loadUnitPath = '/v1/transport-units/:transportUnitBK/load-units/:luPos/packaging-units';

  /** D18: 201, Location of the first created unit, the created units as a list. */
  const sendCreated = async (req: Request, res: Response, ids: number[]): Promise<void> => {
    const units = await selectUnitsByIds(pool, ids);
    if (units[0]) res.location(href(req, `/v1/packaging-units/${units[0].pKey}`));
    await sendJsonList(outgoing, req, res, 201, await unitList(pool, req, units));
  };

  routes.add({
    method: 'POST',
    path: loadUnitPath,
    consumes: ['json'],
    bulk: true,
    readJson: (pieces, itemLimit, _req, share) => readBulk(pieces, itemLimit, inLoadUnitBody, share),
    growsShare: true,
    produces: PACKAGING_UNIT_LIST,
    handler: async (req, res) => {
      const address = parseInput(loadUnitAddressSchema, req.params, 'path');
      const { loadUnitType } = parseInput(createInLoadUnitQuerySchema, req.query, 'query');
      // Every error names its field in the form the client sent: `[3].` or `packagingUnits[3].`.
      const { items, pathOf: path } = bulkItemsOf(req, inLoadUnitBody);
      const target = { transportUnitBK: address.transportUnitBK, luPos: address.luPos, loadUnitType };
      const ids = await withTransaction(
        pool,
        (tx) => createInLoadUnit(tx, target, items, actorOf(req), config.mixedLoadUnits, path),
        { participant: req.transactionParticipant },
      );
      await sendCreated(req, res, ids);
    },
    doc: {
      operationId: 'packaging-units-create',
      tags,
      summary: 'Create PackagingUnits in a LoadUnit (created with loadUnitType when missing)',
      request: {
        params: loadUnitAddressSchema,
        query: createInLoadUnitQuerySchema,
        body: z.union([createInLoadUnitBodySchema, newPackagingUnitsSchema]),
      },
      responses: {
        201: unitListResponse('The created units', PACKAGING_UNIT_LIST, createdHeaders),
        400: apiError('The LoadUnit must be created without a loadUnitType, or holds another Product (D17)', [
          'owms.wms.inv.pu.loadUnitTypeMissing',
          'owms.wms.inv.lu.alreadyAssigned',
        ]),
        404: apiError('An unknown SKU', ['not.found']),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: loadUnitPath,
    produces: UNIT_LIST_WITH_HAL,
    handler: async (req, res) => {
      const address = parseInput(loadUnitAddressSchema, req.params, 'path');
      const list = await reads.run(async (db) =>
        unitList(db, req, await findUnitsAtLoadUnitPosition(db, address.transportUnitBK, address.luPos)),
      );
      await sendJsonList(outgoing, req, res, 200, list);
    },
    doc: {
      operationId: 'packaging-units-findontuandlu',
      tags,
      summary: 'PackagingUnits in one LoadUnit',
      request: { params: loadUnitAddressSchema },
      responses: { 200: unitListResponse('The units, empty when there is no such LoadUnit', UNIT_LIST_WITH_HAL) },
    },
  });

  routes.add({
    method: 'POST',
    path: `${loadUnitPath}/failures`,
    consumes: ['json'],
    handler: async (req, res) => {
      const address = parseInput(loadUnitAddressSchema, req.params, 'path');
      const input = parseInput(reportProblemSchema, req.body);
      const report = {
        sku: input.product.sku,
        quantity: input.quantity,
        messageNo: input.messageNo ?? null,
        messageText: input.messageText ?? null,
      };
      await withTransaction(pool, (tx) => reportProblem(tx, address, report, actorOf(req)), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-reportproblemforpuinlu',
      tags,
      summary: 'Lock a quantity of a Product in a LoadUnit with a problem message',
      request: {
        params: loadUnitAddressSchema,
        body: reportProblemSchema,
      },
      responses: {
        204: noBody('Locked'),
        404: apiError('No such LoadUnit, an unknown SKU, or no AVAILABLE unit of the Product in the LoadUnit', [
          'owms.wms.inv.lu.onTuNotExists',
          'not.found',
          'owms.wms.inv.pu.noPUOnLocation',
        ]),
      },
    },
  });

  for (const version of ['v1', 'v2']) {
    routes.add({
      method: 'GET',
      path: `/${version}/transport-units/:transportUnitBK/load-units/packaging-units`,
      produces: UNIT_LIST_WITH_HAL,
      handler: async (req, res) => {
        const { transportUnitBK } = parseInput(transportUnitParams, req.params, 'path');
        const list = await reads.run(async (db) =>
          unitList(db, req, await findUnitsOnTransportUnit(db, transportUnitBK)),
        );
        await sendJsonList(outgoing, req, res, 200, list);
      },
      doc: {
        operationId: `packaging-units-findontu-${version}`,
        tags,
        summary: 'All PackagingUnits on a TransportUnit',
        request: { params: transportUnitParams },
        responses: { 200: unitListResponse('The units, empty for an unknown TransportUnit', UNIT_LIST_WITH_HAL) },
      },
    });
  }

  routes.add({
    method: 'GET',
    path: '/v1/load-units/:pKey/packaging-units',
    produces: UNIT_LIST_WITH_HAL,
    handler: async (req, res) => {
      const { pKey } = parseInput(packagingUnitKeySchema, req.params, 'path');
      const list = await reads.run(async (db) => unitList(db, req, await findUnitsInLoadUnit(db, pKey)));
      await sendJsonList(outgoing, req, res, 200, list);
    },
    doc: {
      operationId: 'lu-findpuinlu',
      tags: ['LoadUnits'],
      summary: 'PackagingUnits in a LoadUnit',
      request: { params: packagingUnitKeySchema },
      responses: {
        200: unitListResponse('The units in the LoadUnit', UNIT_LIST_WITH_HAL),
        404: apiError('No such LoadUnit', ['owms.wms.inv.lu.pKeyNotExists']),
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/v1/packaging-units',
    consumes: ['json', 'ndjson'],
    bulk: true,
    readJson: (pieces, itemLimit, _req, share) => readBulk(pieces, itemLimit, onLocationBody, share),
    growsShare: true,
    produces: PACKAGING_UNIT_LIST,
    handler: async (req, res) => {
      if (req.is(NDJSON)) {
        // D35, issue 14: the lines go to the database as they arrive; a retry could not read the body again.
        const created = await imports.run(req, ({ lines, timeoutMs, signal, participant }) =>
          withTransaction(
            pool,
            (tx) => intakeUnits(tx, lines, { actor: actorOf(req), timeoutMs, mixedAllowed: config.mixedLoadUnits }),
            { maxAttempts: 1, signal, participant },
          ),
        );
        sendJson(res, 201, { created });
        return;
      }
      const { items, pathOf: path } = bulkItemsOf(req, onLocationBody);
      const ids = await withTransaction(pool, (tx) => createOnLocations(tx, items, actorOf(req), path), {
        participant: req.transactionParticipant,
      });
      await sendCreated(req, res, ids);
    },
    doc: {
      operationId: 'packaging-units-createonlocation',
      tags,
      summary: 'Create PackagingUnits lying directly on Locations, or take in stock as NDJSON',
      description:
        'As application/x-ndjson (D35) the body is one unit a line, into a LoadUnit (`transportUnitBK`, `luPos`, ' +
        '`loadUnitType` when it must be created) or onto a Location (`actualLocation.locationId`), streamed into ' +
        'the database as it arrives (up to IMPORT_BODY_LIMIT, each line up to BODY_LIMIT): all or nothing, the ' +
        'checks, ledger rows and events of creating the units one by one, problems of a line named by its number ' +
        '(`line 3: quantity`), and 201 with how many units were created. It ends when its client does, or its ' +
        'time: a stall of IMPORT_STALL_TIMEOUT_MS or a body not arrived by HTTP_REQUEST_TIMEOUT_MS is a 408, more ' +
        'than 1000 blank lines in a row a 400.',
      request: {
        body: z.union([newPackagingUnitOnLocationSchema, onLocationList]),
        lines: z.union([intakeInLoadUnitSchema, intakeOnLocationSchema]),
      },
      responses: {
        201: createdOrTakenInResponse,
        400: apiError('NDJSON: a LoadUnit must be created without a loadUnitType, or holds another Product (D17)', [
          'owms.wms.inv.pu.loadUnitTypeMissing',
          'owms.wms.inv.lu.alreadyAssigned',
        ]),
        404: apiError('An unknown SKU or Location', [
          'not.found',
          'owms.wms.inv.loc.idNotExists',
          'owms.wms.inv.loc.erpCodeNotExists',
        ]),
        503: serverError(
          'NDJSON: the instance runs as many streamed imports as it may at once (IMPORT_MAX_CONCURRENT)',
          { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
        ),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/packaging-units',
    produces: UNIT_LIST_WITH_HAL,
    handler: async (req, res) => {
      const search = parseInput(packagingUnitSearchSchema, req.query, 'query');
      const list = await reads.run(async (db) => {
        const page = await searchUnits(db, search);
        const { sku, productPKey, locationGroupName, locationId, sortProperty, sortDirection } = search;
        const filters = { sku, productPKey, locationGroupName, locationId, sortProperty, sortDirection };
        const next = nextPageHref(req, page, search.amount ?? DEFAULT_AMOUNT, filters, 'amount');
        return { next, body: await unitList(db, req, page.items, next) };
      });
      linkNextPage(res, list.next);
      await sendJsonList(outgoing, req, res, 200, list.body);
    },
    doc: {
      operationId: 'packaging-units-findforproduct',
      tags,
      summary: 'Reservable units of a Product (by sku, or productPKey in a LocationGroup), or all units on a Location',
      description:
        'A page of `amount` units (default 1000) in the order asked for; when more follow, `Link: rel="next"` ' +
        '(and `_links.next` in HAL) leads to the next page.',
      request: { query: packagingUnitSearchSchema },
      responses: {
        200: unitListResponse('The units found', UNIT_LIST_WITH_HAL, NEXT_PAGE_HEADER),
        404: apiError('An unknown Product, LocationGroup or Location', [
          'not.found',
          'owms.wms.inv.product.notFoundByPKey',
          'owms.common.common.lg.notFoundByName',
          'owms.wms.inv.loc.idNotExists',
        ]),
      },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/v1/packaging-units',
    consumes: ['json'],
    handler: async (req, res) => {
      const input = parseInput(deleteOnLocationSchema, req.body);
      const removal = { sku: input.product.sku, location: input.actualLocation, quantity: input.quantity };
      await withTransaction(pool, (tx) => deleteOnLocation(tx, removal, actorOf(req)), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'packaging-units-deleteonlocation',
      tags,
      summary: 'Remove a quantity (or all) of a Product from a Location',
      request: { body: deleteOnLocationSchema },
      responses: {
        204: noBody('Removed'),
        404: apiError('An unknown SKU or Location, or none of the Product on the Location', [
          'not.found',
          'owms.wms.inv.loc.idNotExists',
          'owms.wms.inv.loc.erpCodeNotExists',
          'owms.wms.inv.pu.noPUOnLocation',
        ]),
        409: apiError('More than the unreserved quantity would go (D22)', ['owms.wms.inv.pu.reserved']),
      },
    },
  });
};
