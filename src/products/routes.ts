import type { Request, Response } from 'express';
import type { ByteSize } from '../config.js';
import { z } from '../openapi/zod.js';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { href, hrefOf } from '../http/links.js';
import { HAL_JSON, JSON_TYPE, NDJSON, PLAIN_LIST, SINGLE_RESOURCE } from '../http/media-types.js';
import { halListSchema, LIST_WITH_HAL } from '../http/hal-list.js';
import { halJsonList, plainJsonList, sendJsonList } from '../http/json-list.js';
import { linkNextPage, MAX_PAGE_SIZE, NEXT_PAGE_HEADER, nextPageHref } from '../http/pagination.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { requireMatch, sendTagged, type Version } from '../http/validators.js';
import { parseInput } from '../http/validate.js';
import { apiError, body, messageOnlyError, noBody, serverError } from '../openapi/responses.js';
import { validationError } from '../http/api-error.js';
import {
  productCreateSchema,
  productImportQuerySchema,
  productImportResultSchema,
  productKeyParamsSchema,
  productListSchema,
  productQuerySchema,
  productUpdateSchema,
} from './schemas.js';
import { createProducts, missingBody, stageProducts, type StagedProducts } from './bulk.js';
import {
  deleteProduct,
  findProductByPKey,
  findProductBySku,
  findProductBySkuAndUom,
  updateProduct,
} from './service.js';
import { importProducts, MAX_REPORTED, type ImportResult } from './import.js';
import type { OnConflict } from './import-sql.js';
import { selectProductPageEnd, selectProductsAfter, selectProductsThrough, type ProductRow } from './sql.js';
import { productResource, productResourceSchema, productSchema, productVersion, productView } from './view.js';

/** Issue 26: a JSON bulk is staged as it arrives; its spool is let go when the answer is sent or the client leaves. */
async function stageBody(pieces: AsyncIterable<string>, productLimit: ByteSize, req: Request): Promise<StagedProducts> {
  const staged = await stageProducts(pieces, productLimit);
  const release = (): void => void staged.rows.close().catch(() => undefined);
  if (req.res!.closed) release();
  else req.res!.once('close', release);
  return staged;
}

const TAGS = ['Products'];
const PRODUCTS_REL = 'products';

const notFoundByPKey = apiError('No Product with this pKey', ['owms.wms.inv.product.notFoundByPKey']);

export const addProductRoutes: AddFeatureRoutes = (routes, { pool, reads, streams, outgoing, imports, config }) => {
  /** Issue 14: the lines go to the database as they arrive; a retry could not read the body again. */
  const importStreamed = (req: Request, onConflict: OnConflict): Promise<ImportResult> =>
    imports.run(req, ({ lines, timeoutMs, signal, participant }) =>
      withTransaction(pool, (tx) => importProducts(tx, lines, { requestId: req.id, timeoutMs, onConflict }), {
        maxAttempts: 1,
        signal,
        participant,
      }),
    );

  routes.add({
    method: 'POST',
    path: '/v1/products',
    consumes: ['json', 'ndjson'],
    bulk: true,
    readJson: stageBody,
    handler: async (req: Request, res: Response) => {
      const { onConflict } = parseInput(productImportQuerySchema, req.query, 'query');
      if (req.is(NDJSON)) {
        const { pKey, ...counts } = await importStreamed(req, onConflict);
        if (pKey) res.location(href(req, `/v1/products/${pKey}`));
        sendJson(res, counts.created > 0 ? 201 : 200, counts);
        return;
      }
      if (onConflict !== 'fail') {
        req.resume();
        throw validationError([{ path: 'onConflict', message: 'applies only to an application/x-ndjson import' }]);
      }
      const staged = req.body as StagedProducts | undefined;
      if (!staged) throw missingBody();
      if (staged.invalid) throw staged.invalid;
      const options = { requestId: req.id, timeoutMs: config.db.statementTimeoutMs };
      const pKey = await withTransaction(pool, (tx) => createProducts(tx, staged, options), {
        participant: req.transactionParticipant,
      });
      if (pKey) res.location(href(req, `/v1/products/${pKey}`));
      sendNoContent(res, 201);
    },
    doc: {
      operationId: 'products-create',
      tags: TAGS,
      summary: 'Create Products in bulk (all or nothing)',
      description:
        'A single Product object is taken as an array of one (D10). An unknown stacked Product or a unit of ' +
        "another kind than the baseUnit's is a 400 core.validation.error. As application/x-ndjson the body is " +
        'one Product per line, streamed into the database as it arrives (issue 14, up to IMPORT_BODY_LIMIT, each ' +
        'line up to BODY_LIMIT): the same checks and answers, problems named by line number (`line 3: sku`), ' +
        `the first invalid line ends the request, and a 400 or 409 names at most the first ${MAX_REPORTED}. ` +
        'An NDJSON import answers what it created, skipped and updated; onConflict says what becomes of a SKU ' +
        'stored already (D35). It ends when its client does, or its time: a stall of IMPORT_STALL_TIMEOUT_MS or ' +
        'a body not arrived by HTTP_REQUEST_TIMEOUT_MS is a 408, more than 1000 blank lines in a row a 400.',
      request: { query: productImportQuerySchema, body: productListSchema, lines: productCreateSchema },
      responses: {
        200: body('NDJSON: nothing created; what was skipped and updated', productImportResultSchema, [JSON_TYPE]),
        201: {
          ...body(
            'Created: no body; for NDJSON a ProductImportResult (application/json), what was created, skipped and ' +
              'updated',
            productImportResultSchema,
            [JSON_TYPE],
          ),
          headers: {
            Location: {
              description: 'The new Product, only when exactly one was sent (and created)',
              schema: { type: 'string' },
            },
          },
          bodyOptional: true,
        },
        409: apiError('A SKU exists already or is sent twice', ['owms.wms.inv.product.alreadyExists']),
        413: serverError('JSON: one Product of the body (an element, or the one object) exceeds BODY_LIMIT'),
        503: serverError(
          'NDJSON: the instance runs as many streamed imports as it may at once (IMPORT_MAX_CONCURRENT)',
          {
            'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
          },
        ),
      },
    },
  });

  /**
   * D33: a page in id order, plain JSON with a Link to the next, or HAL when named (issue 13's lists). D39: where
   * the page ends is read first (the Link goes before the body), then its Products are written as they are read.
   */
  const sendProductPage = async (req: Request, res: Response, limit: number, after: number | undefined) => {
    const from = after ?? 0;
    const through = await reads.run((db) => selectProductPageEnd(db, from, limit));
    const next = through === undefined ? undefined : nextPageHref(req, { items: [], next: through }, limit);
    linkNextPage(res, next);
    req.mediaType = req.accepts([...LIST_WITH_HAL]) || JSON_TYPE;
    let remaining = limit;
    const read = async (last: ProductRow | undefined, size: number): Promise<ProductRow[]> => {
      const count = Math.min(size, remaining);
      const rows =
        count === 0 ? [] : await reads.run((db) => selectProductsThrough(db, last?.id ?? from, through, count));
      remaining -= rows.length;
      return rows;
    };
    const list =
      req.mediaType === HAL_JSON
        ? halJsonList(href(req, req.originalUrl), PRODUCTS_REL, read, (row) => productResource(row, hrefOf(req)), next)
        : plainJsonList(read, productView);
    await sendJsonList(outgoing, req, res, 200, list);
  };

  routes.add({
    method: 'GET',
    path: '/v1/products',
    produces: [...SINGLE_RESOURCE, ...PLAIN_LIST],
    handler: async (req: Request, res: Response) => {
      const query = parseInput(productQuerySchema, req.query, 'query');
      if (query.sku === undefined && (query.limit !== undefined || query.after !== undefined)) {
        await sendProductPage(req, res, query.limit ?? MAX_PAGE_SIZE, query.after);
        return;
      }
      if (query.sku === undefined) {
        // HEAD gets the headers GET would send; reading every Product only to discard them is not worth it.
        if (req.method === 'HEAD') {
          res.status(200).type('application/json').end();
          return;
        }
        await streams.send(
          req,
          res,
          (after, limit) => reads.run((db) => selectProductsAfter(db, after?.id ?? 0, limit)),
          productView,
        );
        return;
      }
      const { sku, uom } = query;
      const product = await reads.run((db) =>
        uom === undefined ? findProductBySku(db, sku) : findProductBySkuAndUom(db, sku, uom),
      );
      sendTagged(res, productVersion(product), productResource(product, hrefOf(req)));
    },
    doc: {
      operationId: 'products-findall',
      validators: 'read',
      tags: TAGS,
      summary: 'All Products (streamed), or one by SKU, or one by SKU and unit of measure',
      description:
        'The links products-findbysku and products-findbyskuanduom lead here too (D7). Without sku the answer ' +
        'is a plain application/json array of Products: all of them streamed, or with limit (and after) one page ' +
        'with a Link to the next, as HAL with _embedded.products and _links.next when application/hal+json is ' +
        'named (D33). With sku it is the Product resource in the negotiated media type.',
      request: { query: productQuerySchema },
      responses: {
        200: {
          description: 'All Products (without sku), or the Product with this SKU (and unit of measure)',
          content: {
            [HAL_JSON]: z.union([productResourceSchema, halListSchema(PRODUCTS_REL, productResourceSchema)]),
            [JSON_TYPE]: z.union([z.array(productSchema), productResourceSchema]),
          },
          headers: NEXT_PAGE_HEADER,
        },
        404: {
          ...apiError(
            'No Product with this SKU: an ApiDeclinedError with messageKey not.found (application/hal+json); or, ' +
              'with uom, a unit of measure the Product does not have: no body at all (D11)',
          ),
          bodyOptional: true,
        },
        503: serverError(
          'Without sku: the instance streams as many lists as it sends at once already (STREAM_MAX_CONCURRENT)',
          { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
        ),
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/products/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(productKeyParamsSchema, req.params, 'path');
      const product = await reads.run((db) => findProductByPKey(db, pKey));
      sendTagged(res, productVersion(product), productResource(product, hrefOf(req)));
    },
    doc: {
      operationId: 'products-findbyspkey',
      validators: 'read',
      tags: TAGS,
      summary: 'One Product by its persistent key',
      request: { params: productKeyParamsSchema },
      responses: { 200: body('The Product', productResourceSchema, SINGLE_RESOURCE), 404: notFoundByPKey },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/products',
    consumes: ['json'],
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const input = parseInput(productUpdateSchema, req.body);
      const checkVersion = (version: Version): void => requireMatch(req, SINGLE_RESOURCE, version);
      const product = await withTransaction(pool, (tx) => updateProduct(tx, input, req.id, checkVersion), {
        participant: req.transactionParticipant,
      });
      sendTagged(res, productVersion(product), productResource(product, hrefOf(req)));
    },
    doc: {
      operationId: 'products-update',
      validators: 'write',
      tags: TAGS,
      summary: 'Replace a Product (identified by pKey); optimistic locking with ol',
      request: { body: productUpdateSchema },
      responses: {
        200: body('The updated Product', productResourceSchema, SINGLE_RESOURCE),
        404: notFoundByPKey,
        409: apiError('Changed by someone else since read (ol), or the new SKU is taken', [
          'resource.changed.unexpectedly',
          'owms.wms.inv.product.alreadyExists',
        ]),
      },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/v1/products/:pKey',
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(productKeyParamsSchema, req.params, 'path');
      const checkVersion = (version: Version): void => requireMatch(req, SINGLE_RESOURCE, version);
      await withTransaction(pool, (tx) => deleteProduct(tx, pKey, req.id, checkVersion), {
        participant: req.transactionParticipant,
      });
      sendNoContent(res);
    },
    doc: {
      operationId: 'products-delete',
      validators: 'write',
      tags: TAGS,
      summary: 'Delete a Product that nothing uses any more',
      request: { params: productKeyParamsSchema },
      responses: {
        204: noBody('Deleted'),
        403: messageOnlyError(
          'Still in use by PackagingUnits, LoadUnits, its units, stacking rules or kept reservations (D13, D32)',
        ),
        404: notFoundByPKey,
      },
    },
  });
};
