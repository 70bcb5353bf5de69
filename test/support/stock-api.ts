import type { Express } from 'express';
import request, { type Response, type Test } from 'supertest';
import { aQuantity, uniqueSku, type Json, type QuantityJson } from './builders.js';
import { bearer } from './tokens.js';

/**
 * Seeding and reading stock through the HTTP API, shared by the suites. A target is the in-process app (supertest),
 * a test context holding it, or the base URL of a spawned service; all take the same requests.
 */
export type Target = Express | string | { app: Express };

export const HOST = 'inventory.test';

let counter = 0;
/** A name no other call in this process returns. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

export function call(target: Target, method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string): Test {
  const server = typeof target === 'string' || typeof target === 'function' ? target : target.app;
  return request(server)[method](path).set('Authorization', bearer()).set('Host', HOST);
}

export const pc = (magnitude: unknown): QuantityJson => aQuantity(magnitude, 'PC');

export function expectStatus(response: Response, status: number, what: string): void {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
  }
}

/** Creates a Product (1 PC base unit unless overridden) and answers its SKU. */
export async function givenProduct(target: Target, overrides: Json = {}): Promise<string> {
  const sku = (overrides.sku as string | undefined) ?? uniqueSku('ALLOC');
  const body = [{ sku, baseUnit: pc(1), ...overrides }];
  expectStatus(await call(target, 'post', '/v1/products').send(body), 201, `create product ${sku}`);
  return sku;
}

/** LocationGroups `{name, parent}` through PUT /v1/location-groups. */
export async function givenGroups(target: Target, ...groups: Json[]): Promise<void> {
  expectStatus(await call(target, 'put', '/v1/location-groups').send(groups), 204, 'put location groups');
}

/** Stores the Locations (and nothing else) through PUT /v1/locations. */
export async function givenLocations(target: Target, ...locations: Json[]): Promise<void> {
  expectStatus(await call(target, 'put', '/v1/locations').send(locations), 204, 'put locations');
}

interface SeededLocation {
  readonly locationId: string;
  readonly erpCode: string;
}

/** A Location with a fresh locationId and erpCode (plus the overrides, e.g. its `locationGroupName`). */
export async function givenLocation(target: Target, overrides: Json = {}): Promise<SeededLocation> {
  const locationId = unique('LOC');
  const location = { locationId, erpCode: `ERP-${locationId}`, ...overrides };
  await givenLocations(target, location);
  return { locationId: location.locationId as string, erpCode: location.erpCode as string };
}

export async function givenTransportUnit(
  target: Target,
  transportUnitBK: string,
  locationId: string,
  transportUnitType = 'PALLET',
): Promise<void> {
  const body = { transportUnitBK, transportUnitType, actualLocation: { locationId } };
  expectStatus(await call(target, 'post', '/v1/transport-units').send(body), 201, `create TU ${transportUnitBK}`);
}

/** A new TransportUnit standing on the Location; answers its business key. */
export async function givenTransportUnitOn(target: Target, locationId: string, type = 'PALLET'): Promise<string> {
  const transportUnitBK = unique('TU');
  await givenTransportUnit(target, transportUnitBK, locationId, type);
  return transportUnitBK;
}

export interface UnitSeed extends Json {
  quantity: QuantityJson;
}

export interface CreatedUnit {
  pKey: string;
  quantity: QuantityJson;
  loadUnit?: { pKey: string; transportUnitBK: string; physicalPosition: string };
}

/** Creates PackagingUnits of the Product in the LoadUnit (created as a BOX when missing), in this order. */
export async function givenUnitsIn(
  target: Target,
  transportUnitBK: string,
  luPos: string,
  sku: string,
  units: UnitSeed[],
): Promise<CreatedUnit[]> {
  const path = `/v1/transport-units/${transportUnitBK}/load-units/${luPos}/packaging-units?loadUnitType=BOX`;
  const body = units.map((unit) => ({ product: { sku }, ...unit }));
  const response = await call(target, 'post', path).send(body);
  expectStatus(response, 201, `create units in ${transportUnitBK}/${luPos}`);
  return response.body as CreatedUnit[];
}

/**
 * POSTs new units of a new Product into LoadUnit 1 of a new TransportUnit and answers the response as it comes,
 * for tests of what a create refuses.
 */
export async function postUnitsOfNewProduct(
  target: Target,
  units: Json[],
): Promise<{ sku: string; response: Response }> {
  const sku = await givenProduct(target);
  const location = await givenLocation(target);
  const bk = await givenTransportUnitOn(target, location.locationId);
  const path = `/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`;
  const response = await call(target, 'post', path).send(units.map((unit) => ({ product: { sku }, ...unit })));
  return { sku, response };
}

export async function givenUnitsOnLocation(
  target: Target,
  locationId: string,
  sku: string,
  units: UnitSeed[],
): Promise<CreatedUnit[]> {
  const body = units.map((unit) => ({ product: { sku }, actualLocation: { locationId }, ...unit }));
  const response = await call(target, 'post', '/v1/packaging-units').send(body);
  expectStatus(response, 201, `create units on ${locationId}`);
  return response.body as CreatedUnit[];
}

/** Locks (or unlocks) a LoadUnit for allocation through PATCH /v1/load-units/{pKey}. */
export async function givenLoadUnitLocked(target: Target, loadUnitPKey: string, locked = true): Promise<void> {
  const response = await call(target, 'patch', `/v1/load-units/${loadUnitPKey}`).send({ locked });
  expectStatus(response, 200, `lock load unit ${loadUnitPKey}`);
}

export function allocate(target: Target, body: unknown, query = ''): Test {
  return call(target, 'post', `/allocation/transport-units${query}`).send(body as object);
}

export function release(target: Target, reservationId: string): Test {
  return call(target, 'delete', `/allocation/reservations/${encodeURIComponent(reservationId)}`);
}

/** The `qtyAvailable` of a unit as GET /v1/packaging-units/{pKey} shows it. */
export async function qtyAvailableOf(target: Target, pKey: string): Promise<QuantityJson> {
  const response = await call(target, 'get', `/v1/packaging-units/${pKey}`);
  expectStatus(response, 200, `get unit ${pKey}`);
  return (response.body as { qtyAvailable: QuantityJson }).qtyAvailable;
}

export interface AllocationElement {
  transportUnitBK: string;
  loadUnitPosition: string;
  sku: string;
  actualErpCode?: string;
  qtyAllocated: QuantityJson;
  reservationId: string;
}

/**
 * The file's database is dropped WITH (FORCE) as soon as pool.end() resolves, which can end connections still
 * closing with 57P01; the pool re-emits that as an 'error' nobody listens to. Files that open many connections at
 * once tolerate exactly that shutdown (and nothing else).
 */
export function toleratePoolTeardown(pool: { on(event: 'error', listener: (error: Error) => void): unknown }): void {
  pool.on('error', (error: Error & { code?: string }) => {
    if (error.code !== '57P01') throw error;
  });
}

/** The base amount (PC or MG) of a quantity in the D2 JSON shape, for sums over responses. */
export function baseAmountOf(quantity: QuantityJson): number {
  const factors: Record<string, number> = { PC: 1, DOZ: 12, MG: 1, G: 1000, KG: 1_000_000, T: 1_000_000_000 };
  const factor = factors[quantity.unitType[1]];
  if (factor === undefined) throw new Error(`unknown unit ${quantity.unitType[1]}`);
  return Number(quantity.magnitude) * factor;
}

/** lu-divide (D16), form-urlencoded: `parts` empty LoadUnits of `type` at positions "1" … "n" on the TransportUnit. */
export async function givenDivided(
  target: Target,
  transportUnitBK: string,
  parts: number,
  type = 'BOX',
): Promise<void> {
  const fields = { transportUnitBK, loadUnitType: type, parts: String(parts) };
  const response = await call(target, 'post', '/v1/transport-unit').type('form').send(fields);
  expectStatus(response, 201, `divide ${transportUnitBK}`);
}
