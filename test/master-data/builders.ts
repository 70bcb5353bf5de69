import type { Express } from 'express';
import type request from 'supertest';
import { beforeAll } from 'vitest';
import type { TestContext } from '../support/app.js';
import { call, HOST, toleratePoolTeardown } from '../support/stock-api.js';

export { givenGroups, givenLocations } from '../support/stock-api.js';
export const BASE = `http://${HOST}`;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const HAL = 'application/hal+json; charset=utf-8';

/** A name no other test of the file uses, so tests sharing the file's database stay independent. */
let counter = 0;
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function aLocation(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { locationId: unique('LOC'), ...overrides };
}

export function putGroups(app: Express, body: unknown): request.Test {
  return call(app, 'put', '/v1/location-groups').send(body as object);
}

export function putLocations(app: Express, body: unknown): request.Test {
  return call(app, 'put', '/v1/locations').send(body as object);
}

export function postTransportUnit(app: Express, body: unknown): request.Test {
  return call(app, 'post', '/v1/transport-units').send(body as object);
}

export function get(app: Express, path: string): request.Test {
  return call(app, 'get', path);
}

export function patch(app: Express, path: string): request.Test {
  return call(app, 'patch', path);
}

export async function getLocation(app: Express, locationId: string): Promise<Record<string, unknown>> {
  const response = await get(app, `/v1/locations?locationId=${encodeURIComponent(locationId)}`);
  if (response.status !== 200) throw new Error(`GET location ${locationId}: ${response.status}`);
  return response.body as Record<string, unknown>;
}

/** toleratePoolTeardown for the file's pool, registered once beforeAll has opened it. */
export function ignoreTeardownDisconnects(ctx: TestContext): void {
  beforeAll(() => toleratePoolTeardown(ctx.db.pool));
}
