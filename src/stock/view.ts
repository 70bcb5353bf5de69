import type { Json } from '../http/view.js';
import { linksSchema } from '../http/links.js';
import { z } from '../openapi/zod.js';
import { baseCodeOf } from '../packaging-units/stock.js';
import { Quantity } from '../units/quantity.js';
import { quantityResponseSchema } from '../units/quantity-schema.js';
import type { ListedStock, StockLevel } from './service.js';
import type { StockRow } from './sql.js';

/** The rel of the Products' figures in a HAL page of the stock list. */
export const STOCK_REL = 'stock';

/** An amount kept in the kind's smallest unit, in the Product's base unit (D31), exactly. */
function inBaseUnit(amount: string, baseUnitCode: string): Quantity {
  const smallest = Quantity.of(amount, baseCodeOf(baseUnitCode));
  return smallest.to(baseUnitCode) ?? smallest;
}

const figureFields = {
  onHand: quantityResponseSchema,
  reserved: quantityResponseSchema,
  available: quantityResponseSchema,
};

/** D40: the feed cursor (D29) of the last event a reading includes: `GET /v1/events?after=` it gives what follows. */
const feedCursorSchema = z.string().openapi({
  description:
    'The cursor of the last event these figures include: the events after it (GET /v1/events?after=) are ' +
    'exactly the changes since',
});

const rowSchema = (placeKey: 'locationGroupName' | 'locationId') =>
  z.object({ [placeKey]: z.string().nullable(), ...figureFields }).strict();

/** D31 in plain JSON: `available` left out at a past instant, `rows` only when asked for `by` place. */
export const stockLevelSchema = z
  .object({
    sku: z.string(),
    onHand: quantityResponseSchema,
    reserved: quantityResponseSchema,
    available: quantityResponseSchema.optional(),
    asOf: z.iso.datetime(),
    feedCursor: feedCursorSchema,
    rows: z.union([z.array(rowSchema('locationGroupName')), z.array(rowSchema('locationId'))]).optional(),
  })
  .strict()
  .openapi('StockLevel');

export const stockLevelResourceSchema = z
  .object({ ...stockLevelSchema.shape, _links: linksSchema(['self', 'product']) })
  .strict()
  .openapi('StockLevelResource');

export const productStockSchema = z
  .object({
    sku: z.string(),
    ...figureFields,
    available: quantityResponseSchema.optional(),
    feedCursor: feedCursorSchema,
  })
  .strict()
  .openapi('ProductStock');

export const productStockResourceSchema = z
  .object({ ...productStockSchema.shape, _links: linksSchema(['self']) })
  .strict()
  .openapi('ProductStockResource');

function rowView(row: StockRow, by: 'locationGroup' | 'location', baseUnitCode: string): Json {
  return {
    [by === 'locationGroup' ? 'locationGroupName' : 'locationId']: row.place,
    onHand: inBaseUnit(row.onHand, baseUnitCode),
    reserved: inBaseUnit(row.reserved, baseUnitCode),
    available: inBaseUnit(row.available, baseUnitCode),
  };
}

export function stockLevelView(level: StockLevel): Json {
  const view: Json = {
    sku: level.sku,
    onHand: inBaseUnit(level.onHand, level.baseUnitCode),
    reserved: inBaseUnit(level.reserved, level.baseUnitCode),
  };
  if (level.available !== undefined) view.available = inBaseUnit(level.available, level.baseUnitCode);
  view.asOf = level.asOf.toISOString();
  view.feedCursor = String(level.feedCursor);
  if (level.rows) view.rows = level.rows.items.map((row) => rowView(row, level.rows!.by, level.baseUnitCode));
  return view;
}

export const stockPath = (sku: string): string => `/v1/stock?sku=${encodeURIComponent(sku)}`;

export function stockLevelResource(level: StockLevel, selfHref: string, link: (path: string) => string): Json {
  return {
    ...stockLevelView(level),
    _links: { self: { href: selfHref }, product: { href: link(`/v1/products?sku=${encodeURIComponent(level.sku)}`) } },
  };
}

export function productStockView(stock: ListedStock): Json {
  const view: Json = {
    sku: stock.sku,
    onHand: inBaseUnit(stock.onHand, stock.baseUnitCode),
    reserved: inBaseUnit(stock.reserved, stock.baseUnitCode),
  };
  if (stock.available !== undefined) view.available = inBaseUnit(stock.available, stock.baseUnitCode);
  view.feedCursor = String(stock.feedCursor);
  return view;
}

export function productStockResource(stock: ListedStock, link: (path: string) => string): Json {
  return { ...productStockView(stock), _links: { self: { href: link(stockPath(stock.sku)) } } };
}
