import type { Request } from 'express';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { halList, halListSchema, LIST_WITH_HAL } from '../http/hal-list.js';
import { href, linkTo } from '../http/links.js';
import { HAL_JSON, SINGLE_RESOURCE } from '../http/media-types.js';
import { linkNextPage, NEXT_PAGE_HEADER, nextPageHref } from '../http/pagination.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { ETAG_HEADER, requireMatch, sendTagged } from '../http/validators.js';
import { LoadUnitMessageKeys } from '../load-units/messages.js';
import { MessageKeys as MasterDataKeys } from '../master-data/messages.js';
import { apiError, body, noBody } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { sendUnit } from '../packaging-units/render.js';
import { actorOf } from '../packaging-units/stock.js';
import { packagingUnitResourceSchema } from '../packaging-units/view.js';
import { issueReservation, pickReservation } from './pick-service.js';
import { pickRequestSchema, reservationListQuerySchema, reservationParamsSchema } from './schemas.js';
import { findReservation, findReservations, releaseReservation, type ReservationCheck } from './service.js';
import {
  RESERVATIONS_REL,
  reservationResource,
  reservationResourceSchema,
  reservationSchema,
  reservationVersion,
  reservationView,
} from './view.js';

const tags = ['Allocation'];
const NOT_FOUND = 'owms.wms.inv.res.notFound';
const NOT_ACTIVE = 'owms.wms.inv.res.notActive';
const unknownReservation = apiError('No such reservation was ever issued', [NOT_FOUND]);

/** Where a reservation is read (D32). */
export const reservationPath = (reservationId: string): string => `/allocation/reservations/${reservationId}`;

/** D40: the If-Match check of a change of a reservation against it as locked; none without the header. */
const matching = (req: Request): ReservationCheck =>
  req.headers['if-match'] === undefined
    ? undefined
    : (current) => requireMatch(req, SINGLE_RESOURCE, reservationVersion(current));

/** D32: a reservation's life after allocation: read, list, pick, issue, release. */
export const addReservationRoutes: AddFeatureRoutes = (routes, { pool, reads, config }) => {
  routes.add({
    method: 'GET',
    path: '/allocation/reservations/:reservationId',
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { reservationId } = parseInput(reservationParamsSchema, req.params, 'path');
      const detail = await reads.run((db) => findReservation(db, reservationId));
      const self = linkTo(req, reservationPath(detail.reservation.reservationId));
      sendTagged(res, reservationVersion(detail), reservationResource(detail, self));
    },
    doc: {
      operationId: 'reservations-findbyid',
      validators: 'read',
      tags,
      summary: 'One reservation: its state and what it holds, or held when it ended',
      request: { params: reservationParamsSchema },
      responses: { 200: body('The reservation', reservationResourceSchema, SINGLE_RESOURCE), 404: unknownReservation },
    },
  });

  routes.add({
    method: 'GET',
    path: '/allocation/reservations',
    produces: LIST_WITH_HAL,
    handler: async (req, res) => {
      const { limit, after, ...filter } = parseInput(reservationListQuerySchema, req.query, 'query');
      const page = await reads.run((db) => findReservations(db, filter, { limit, after }));
      const next = nextPageHref(req, page, limit, filter);
      linkNextPage(res, next);
      if (req.mediaType === HAL_JSON) {
        const resources = page.items.map((detail) =>
          reservationResource(detail, linkTo(req, reservationPath(detail.reservation.reservationId))),
        );
        sendJson(res, 200, halList(href(req, req.originalUrl), RESERVATIONS_REL, resources, next));
        return;
      }
      sendJson(res, 200, page.items.map(reservationView));
    },
    doc: {
      operationId: 'reservations-findall',
      tags,
      summary: 'Reservations, newest first, a page at a time; filtered by SKU, external reference and state',
      request: { query: reservationListQuerySchema },
      responses: {
        200: {
          description: 'The reservations; HAL when application/hal+json is named',
          content: {
            'application/json': z.array(reservationSchema),
            [HAL_JSON]: halListSchema(RESERVATIONS_REL, reservationResourceSchema).openapi('ReservationHalList'),
          },
          headers: NEXT_PAGE_HEADER,
        },
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/allocation/reservations/:reservationId/picks',
    consumes: ['json'],
    produces: SINGLE_RESOURCE,
    handler: async (req, res) => {
      const { reservationId } = parseInput(reservationParamsSchema, req.params, 'path');
      const input = parseInput(pickRequestSchema, req.body);
      const unit = await withTransaction(
        pool,
        (tx) => pickReservation(tx, reservationId, input, actorOf(req), config.mixedLoadUnits, matching(req)),
        { participant: req.transactionParticipant },
      );
      res.location(href(req, `/v1/packaging-units/${unit.pKey}`));
      await sendUnit(pool, req, res, unit, 201);
    },
    doc: {
      operationId: 'reservations-pick',
      validators: 'write',
      tags,
      summary: 'Pick reserved goods: move them to the target, still reserved by the reservation',
      description:
        'Moves qty of what the reservation holds on PackagingUnit pKey to the target, split off into a new unit ' +
        'unless the whole unit goes; the moved goods stay reserved by this reservation until issued or released.',
      request: { params: reservationParamsSchema, body: pickRequestSchema },
      responses: {
        201: body('The unit at the target', packagingUnitResourceSchema, SINGLE_RESOURCE, {
          Location: { description: 'The unit at the target', required: true, schema: { type: 'string' } },
          ...ETAG_HEADER,
        }),
        400: apiError('The target LoadUnit must be created without a loadUnitType, or holds another Product', [
          'owms.wms.inv.pu.loadUnitTypeMissing',
          'owms.wms.inv.lu.alreadyAssigned',
        ]),
        404: apiError('Unknown reservation or target Location', [
          NOT_FOUND,
          MasterDataKeys.locationIdNotExists,
          LoadUnitMessageKeys.onTuNotExists,
        ]),
        409: apiError('More than the reservation holds on that unit, or the reservation is not ACTIVE', [
          'owms.wms.inv.res.overpick',
          NOT_ACTIVE,
        ]),
      },
    },
  });

  routes.add({
    method: 'POST',
    path: '/allocation/reservations/:reservationId/issue',
    handler: async (req, res) => {
      const { reservationId } = parseInput(reservationParamsSchema, req.params, 'path');
      await withTransaction(pool, (tx) => issueReservation(tx, reservationId, actorOf(req), matching(req)), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'reservations-issue',
      validators: 'write',
      tags,
      summary: 'Goods issue: what the reservation holds leaves stock (idempotent)',
      request: { params: reservationParamsSchema },
      responses: {
        204: noBody('Issued, or issued already'),
        404: unknownReservation,
        409: apiError('The reservation was released or expired', [NOT_ACTIVE]),
      },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/allocation/reservations/:reservationId',
    handler: async (req, res) => {
      const { reservationId } = parseInput(reservationParamsSchema, req.params, 'path');
      await withTransaction(pool, (tx) => releaseReservation(tx, reservationId, actorOf(req), matching(req)), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'release-reservation',
      validators: 'write',
      tags,
      summary: 'Release a reservation (idempotent); an expired or issued one stays as it ended',
      request: { params: reservationParamsSchema },
      responses: {
        204: noBody('Released, or released, expired or issued already'),
        404: unknownReservation,
      },
    },
  });
};
