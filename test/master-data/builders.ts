import type { Express } from 'express';
import request from 'supertest';
import { beforeAll } from 'vitest';
import type { TestContext } from '../support/app.js';
import { bearer } from '../support/tokens.js';

export const HOST = 'inventory.test';
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
  return request(app)
    .put('/v1/location-groups')
    .set('Authorization', bearer())
    .set('Host', HOST)
    .send(body as object);
}

export function putLocations(app: Express, body: unknown): request.Test {
  return request(app)
    .put('/v1/locations')
    .set('Authorization', bearer())
    .set('Host', HOST)
    .send(body as object);
}

export function postTransportUnit(app: Express, body: unknown): request.Test {
  return request(app)
    .post('/v1/transport-units')
    .set('Authorization', bearer())
    .set('Host', HOST)
    .send(body as object);
}

export function get(app: Express, path: string): request.Test {
  return request(app).get(path).set('Authorization', bearer()).set('Host', HOST);
}

export function patch(app: Express, path: string): request.Test {
  return request(app).patch(path).set('Authorization', bearer()).set('Host', HOST);
}

export async function getLocation(app: Express, locationId: string): Promise<Record<string, unknown>> {
  const response = await get(app, `/v1/locations?locationId=${encodeURIComponent(locationId)}`);
  if (response.status !== 200) throw new Error(`GET location ${locationId}: ${response.status}`);
  return response.body as Record<string, unknown>;
}

/** Stores the Locations (and nothing else) or fails the test. */
export async function givenLocations(app: Express, ...locations: Record<string, unknown>[]): Promise<void> {
  const response = await putLocations(app, locations);
  if (response.status !== 204) throw new Error(`PUT locations: ${response.status} ${JSON.stringify(response.body)}`);
}

export async function givenGroups(app: Express, ...groups: Record<string, unknown>[]): Promise<void> {
  const response = await putGroups(app, groups);
  if (response.status !== 204) throw new Error(`PUT groups: ${response.status} ${JSON.stringify(response.body)}`);
}

/**
 * test/support/database.ts drops the file's database WITH (FORCE) as soon as pool.end() resolves, which is
 * before the pool's connections are closed; PostgreSQL then ends them with 57P01, and the pool re-emits that
 * as an 'error' event nobody listens to. Files that open many connections at once (the concurrency tests)
 * meet this race on a server PostgreSQL; the shutdown of a connection being closed anyway is ignored here.
 */
export function ignoreTeardownDisconnects(ctx: TestContext): void {
  beforeAll(() => {
    ctx.db.pool.on('error', (error: Error & { code?: string }) => {
      if (error.code !== '57P01') throw error;
    });
  });
}
