import type { Request, Response } from 'express';
import { z } from '../openapi/zod.js';
import { withTransaction } from '../db/tx.js';
import type { AddFeatureRoutes } from '../http/feature.js';
import { href, hrefOf } from '../http/links.js';
import { PLAIN_LIST, SINGLE_RESOURCE } from '../http/media-types.js';
import { sendJson, sendNoContent } from '../http/respond.js';
import { streamJsonArray } from '../http/stream.js';
import { isJsonObject, parseInput } from '../http/validate.js';
import {
  productCreateSchema,
  productKeyParamsSchema,
  productQuerySchema,
  productUpdateSchema,
  type ProductInput,
} from './schemas.js';
import {
  createProducts,
  deleteProduct,
  findProductByPKey,
  findProductBySku,
  findProductBySkuAndUom,
  updateProduct,
} from './service.js';
import { allProductsQuery } from './sql.js';
import { productResource, productView } from './view.js';

const productListSchema = z.array(productCreateSchema).min(1, { error: 'must contain at least one Product' });

/** D10: an array, or one object treated as an array of one (its field paths then carry no index). */
function parseProducts(body: unknown): { products: ProductInput[]; pathPrefix: (index: number) => string } {
  if (isJsonObject(body)) {
    return { products: [parseInput(productCreateSchema, body)], pathPrefix: () => '' };
  }
  return { products: parseInput(productListSchema, body), pathPrefix: (index) => `[${index}].` };
}

const errorResponses = {
  400: { description: 'core.validation.error: the message lists every invalid field' },
  401: { description: 'Missing or invalid bearer token' },
};

export const addProductRoutes: AddFeatureRoutes = (routes, { pool }) => {
  routes.add({
    method: 'POST',
    path: '/v1/products',
    consumes: ['json'],
    handler: async (req: Request, res: Response) => {
      const { products, pathPrefix } = parseProducts(req.body);
      const pKey = await withTransaction(pool, (tx) => createProducts(tx, products, pathPrefix, req.id));
      if (pKey) res.location(href(req, `/v1/products/${pKey}`));
      sendNoContent(res, 201);
    },
    doc: {
      operationId: 'products-create',
      tags: ['Products'],
      summary: 'Create Products in bulk (all or nothing)',
      request: { body: { content: { 'application/json': { schema: productListSchema } } } },
      responses: {
        201: { description: 'Created; Location header only when exactly one Product was sent' },
        409: { description: 'owms.wms.inv.product.alreadyExists: the conflicting SKUs' },
        ...errorResponses,
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/products',
    produces: [...SINGLE_RESOURCE, ...PLAIN_LIST],
    handler: async (req: Request, res: Response) => {
      const query = parseInput(productQuerySchema, req.query, 'query');
      if (query.sku === undefined) {
        await streamJsonArray(pool, res, allProductsQuery, productView);
        return;
      }
      const product =
        query.uom === undefined
          ? await findProductBySku(pool, query.sku)
          : await findProductBySkuAndUom(pool, query.sku, query.uom);
      sendJson(res, 200, productResource(product, hrefOf(req)));
    },
    doc: {
      operationId: 'products-findall',
      tags: ['Products'],
      summary: 'All Products (streamed), or one by SKU, or one by SKU and unit of measure',
      request: { query: z.object({ sku: z.string().optional(), uom: z.string().optional() }) },
      responses: {
        200: { description: 'Without sku: application/json array; with sku: application/hal+json Product' },
        404: { description: 'not.found for an unknown SKU; no body for a UOM the Product does not have' },
        ...errorResponses,
      },
    },
  });

  routes.add({
    method: 'GET',
    path: '/v1/products/:pKey',
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(productKeyParamsSchema, req.params, 'path');
      sendJson(res, 200, productResource(await findProductByPKey(pool, pKey), hrefOf(req)));
    },
    doc: {
      operationId: 'products-findbyspkey',
      tags: ['Products'],
      summary: 'One Product by its persistent key',
      request: { params: productKeyParamsSchema },
      responses: { 200: { description: 'The Product' }, 404: { description: 'owms.wms.inv.product.notFoundByPKey' } },
    },
  });

  routes.add({
    method: 'PUT',
    path: '/v1/products',
    consumes: ['json'],
    produces: SINGLE_RESOURCE,
    handler: async (req: Request, res: Response) => {
      const input = parseInput(productUpdateSchema, req.body);
      const product = await withTransaction(pool, (tx) => updateProduct(tx, input, req.id));
      sendJson(res, 200, productResource(product, hrefOf(req)));
    },
    doc: {
      operationId: 'products-update',
      tags: ['Products'],
      summary: 'Replace a Product (identified by pKey); optimistic locking with ol',
      request: { body: { content: { 'application/json': { schema: productUpdateSchema } } } },
      responses: {
        200: { description: 'The updated Product' },
        404: { description: 'owms.wms.inv.product.notFoundByPKey' },
        409: { description: 'resource.changed.unexpectedly, or owms.wms.inv.product.alreadyExists' },
        ...errorResponses,
      },
    },
  });

  routes.add({
    method: 'DELETE',
    path: '/v1/products/:pKey',
    handler: async (req: Request, res: Response) => {
      const { pKey } = parseInput(productKeyParamsSchema, req.params, 'path');
      await withTransaction(pool, (tx) => deleteProduct(tx, pKey, req.id));
      sendNoContent(res);
    },
    doc: {
      operationId: 'products-delete',
      tags: ['Products'],
      summary: 'Delete a Product that nothing uses any more',
      request: { params: productKeyParamsSchema },
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'Still in use: body with only message' },
        404: { description: 'owms.wms.inv.product.notFoundByPKey' },
      },
    },
  });
};
