/**
 * Probes of the transactional outbox (D27) for the outbox suites: the events a request wrote, the resources as GET
 * answers them, and the seeds the cases share. Each case arranges its own data, so cases share the file's database.
 */
import type { Response, Test } from 'supertest';
import { expect } from 'vitest';
import type { TestContext } from './app.js';
import { aQuantity, type Json } from './builders.js';
import { expectStatus } from './stock-api.js';
import {
  aUnit,
  givenDivided,
  givenUnitsInLoadUnit,
  loadUnitPKey,
  stockApi,
  storedUnitsOf,
  uniqueKey,
  type StockApi,
} from './stock.js';

/** One event the operation must write; `resource` only where no GET can tell it (deleted, reservations). */
export interface Expected {
  readonly type: string;
  readonly key: string;
  readonly resource?: Json;
}

export interface OutboxRow {
  readonly type: string;
  readonly key: string;
  readonly requestId: string | null;
  readonly resource: Json;
}

/** What a case seeds before the request: the request itself and how to tell the events it must write. */
export interface Arranged {
  readonly send: () => Test;
  readonly status: number;
  readonly expected: (response: Response) => Promise<Expected[]> | Expected[];
}

export interface EventCase {
  readonly name: string;
  readonly arrange: () => Promise<Arranged>;
}

export const event = (type: string, key: string, resource?: Json): Expected => ({ type, key, resource });

export const pc = (magnitude: number): Json => aQuantity(magnitude) as unknown as Json;

const RESOURCE_PATHS: Record<string, string> = {
  product: '/v1/products',
  lu: '/v1/load-units',
  pu: '/v1/packaging-units',
};

export interface OutboxProbe {
  readonly api: StockApi;
  /** Sends the request with a known X-Request-Id; answers it and the events it wrote. */
  sendTracked(send: () => Test): Promise<{ requestId: string; response: Response; events: OutboxRow[] }>;
  /** The resource as GET answers it in plain JSON, without `_links`. */
  plainGet(type: string, key: string): Promise<Json>;
  /** The event's resource is the expected one, or else exactly what GET answers now, in the same key order. */
  expectResource(row: OutboxRow, expected: Expected): Promise<void>;
  productPKey(sku: string): Promise<string>;
  /** The pKeys of the Product's units, oldest first. */
  unitKeysOf(sku: string): Promise<string[]>;
  /** A LoadUnit at position 1 of a new TransportUnit holding units of these magnitudes (PC) of the Product. */
  givenLoadUnitWith(sku: string, magnitudes: number[]): Promise<{ bk: string; lu: string; units: string[] }>;
  /** A LoadUnit at position 1 of a new TransportUnit, without a Product. */
  givenEmptyLoadUnit(): Promise<{ bk: string; lu: string }>;
}

export function outboxProbe(ctx: TestContext): OutboxProbe {
  const api = stockApi(ctx);

  async function lastSeq(): Promise<number> {
    const { rows } = await ctx.db.pool.query<{ seq: number }>('SELECT COALESCE(max(seq), 0) AS seq FROM event_outbox');
    return Number(rows[0]!.seq);
  }

  async function eventsAfter(seq: number): Promise<OutboxRow[]> {
    const { rows } = await ctx.db.pool.query<OutboxRow>(
      `SELECT type, resource_key AS key, request_id AS "requestId", resource FROM event_outbox
        WHERE seq > $1 ORDER BY seq`,
      [seq],
    );
    return rows;
  }

  async function plainGet(type: string, key: string): Promise<Json> {
    const path = `${RESOURCE_PATHS[type.split('.')[0]!]}/${key}`;
    const response = await api.get(path, 'application/json');
    expectStatus(response, 200, `GET ${path}`);
    const body = { ...(response.body as Json) };
    delete body._links;
    return body;
  }

  return {
    api,
    async sendTracked(send) {
      const requestId = uniqueKey('request');
      const mark = await lastSeq();
      const response = await send().set('X-Request-Id', requestId);
      return { requestId, response, events: await eventsAfter(mark) };
    },
    plainGet,
    async expectResource(row, expected) {
      const resource = expected.resource ?? (await plainGet(row.type, row.key));
      expect(row.resource, `${row.type} ${row.key}`).toEqual(resource);
      expect(Object.keys(row.resource)).toEqual(Object.keys(resource));
    },
    async productPKey(sku) {
      const { rows } = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM product WHERE sku = $1', [sku]);
      return rows[0]!.p_key;
    },
    async unitKeysOf(sku) {
      return (await storedUnitsOf(ctx.db.pool, sku)).map((unit) => unit.pKey);
    },
    async givenLoadUnitWith(sku, magnitudes) {
      const bk = uniqueKey('TU');
      const units = await givenUnitsInLoadUnit(
        ctx,
        bk,
        '1',
        magnitudes.map((magnitude) => aUnit(sku, magnitude)),
      );
      return { bk, lu: await loadUnitPKey(ctx.db.pool, bk, '1'), units: units.map((unit) => unit.pKey) };
    },
    async givenEmptyLoadUnit() {
      const bk = uniqueKey('TU');
      await givenDivided(ctx, bk, 1);
      return { bk, lu: await loadUnitPKey(ctx.db.pool, bk, '1') };
    },
  };
}
