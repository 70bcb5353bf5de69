import type { AddFeatureRoutes } from '../http/feature.js';
import { halList, halListSchema, LIST_WITH_HAL } from '../http/hal-list.js';
import { href, hrefOf } from '../http/links.js';
import { HAL_JSON, JSON_TYPE } from '../http/media-types.js';
import { linkNextPage, MAX_PAGE_SIZE, NEXT_PAGE_HEADER, nextPageHref } from '../http/pagination.js';
import { sendJson } from '../http/respond.js';
import { parseInput } from '../http/validate.js';
import { apiError, serverError } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { StockMessageKeys } from './messages.js';
import { stockQuerySchema } from './schemas.js';
import { listStockLevels, readStockLevel } from './service.js';
import {
  productStockResource,
  productStockResourceSchema,
  productStockSchema,
  productStockView,
  STOCK_REL,
  stockLevelResource,
  stockLevelResourceSchema,
  stockLevelSchema,
  stockLevelView,
} from './view.js';

const tags = ['Stock'];

/**
 * D31. Read on the primary, not a replica: `available` must be what an allocation there could take now, and
 * `asOf` the instant of the snapshot the figures come from.
 */
export const addStockRoutes: AddFeatureRoutes = (routes, { pool }) => {
  routes.add({
    method: 'GET',
    path: '/v1/stock',
    produces: LIST_WITH_HAL,
    handler: async (req, res) => {
      const query = parseInput(stockQuerySchema, req.query, 'query');
      const hal = req.mediaType === HAL_JSON;
      if (query.sku !== undefined) {
        const level = await readStockLevel(pool, { ...query, sku: query.sku });
        const self = href(req, req.originalUrl);
        sendJson(res, 200, hal ? stockLevelResource(level, self, hrefOf(req)) : stockLevelView(level));
        return;
      }
      const limit = query.limit ?? MAX_PAGE_SIZE;
      const page = await listStockLevels(pool, query, limit);
      // The next page keeps `asOf`: a walk that started as of a feedCursor stays one snapshot (D40).
      const next = nextPageHref(req, page, limit, { asOf: query.asOf?.toString() });
      linkNextPage(res, next);
      if (hal) {
        const items = page.items.map((stock) => productStockResource(stock, hrefOf(req)));
        sendJson(res, 200, halList(href(req, req.originalUrl), STOCK_REL, items, next));
      } else {
        sendJson(res, 200, page.items.map(productStockView));
      }
    },
    doc: {
      operationId: 'stock-find',
      tags,
      summary: "A Product's stock on hand, reserved and available; without sku every Product's, a page at a time",
      description:
        "With `sku`: `{sku, onHand, reserved, available, asOf, feedCursor}` in the Product's base unit, from one " +
        'snapshot; `available` is exactly what allocation with the same `sourceLocationGroupNames` could reserve. ' +
        '`by` adds rows per place that add up to the totals; `at` answers onHand and reserved as committed at a ' +
        'past instant (a transaction counts from its commit, all together). Without `sku`: every Product in SKU ' +
        'order, zeros included, `limit`/`after` pages with a `Link: rel="next"`; `asOf=<feedCursor>` reads every ' +
        'page as of the first one. `feedCursor` is the cursor of the last event the figures include: the figures ' +
        'plus `GET /v1/events?after=<feedCursor>` give every later change exactly once.',
      request: { query: stockQuerySchema },
      responses: {
        200: {
          description: "One Product's figures, or a page of every Product's",
          headers: NEXT_PAGE_HEADER,
          content: {
            [JSON_TYPE]: z.union([stockLevelSchema, z.array(productStockSchema)]),
            [HAL_JSON]: z.union([stockLevelResourceSchema, halListSchema(STOCK_REL, productStockResourceSchema)]),
          },
        },
        404: apiError('Unknown SKU', ['not.found']),
        410: apiError('The instant or feedCursor is older than the history kept', [StockMessageKeys.historyExpired]),
        503: serverError('The feed has not numbered a change the figures hold; retry (Retry-After)'),
      },
    },
  });
};
