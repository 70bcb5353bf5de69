/**
 * The README scenario as an integrator writes it: a client generated from the served OpenAPI document
 * (openapi-typescript, `api.ts`) driven through openapi-fetch, with no casts. typed-client.test.ts compiles this
 * file with `tsc --strict` against freshly generated types and then runs it against the service. Every answer
 * is checked: an unexpected status or body throws.
 */
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const PIECE_UNIT = 'org.openwms.core.units.api.PieceUnit';

interface Quantity {
  unitType: [string, string];
  magnitude: number;
}

function pieces(magnitude: number, code = 'PC'): Quantity {
  return { unitType: [PIECE_UNIT, code], magnitude };
}

class UnexpectedAnswer extends Error {}

/** Fails the scenario unless the answer has the status the README promises. */
function expectStatus(step: string, response: Response, status: number): void {
  if (response.status !== status) {
    throw new UnexpectedAnswer(`${step}: expected ${status}, got ${response.status}`);
  }
}

function expectEqual<T>(step: string, actual: T, expected: T): void {
  if (actual !== expected) {
    throw new UnexpectedAnswer(`${step}: expected ${String(expected)}, got ${String(actual)}`);
  }
}

/** The value, or a failure naming the step whose answer lacked it. */
function present<T>(step: string, value: T | null | undefined): T {
  if (value === undefined || value === null) throw new UnexpectedAnswer(`${step}: the answer has no body`);
  return value;
}

/** Runs the scenario; `tag` makes its keys unique. Answers the steps it walked, in order. */
export async function runScenario(baseUrl: string, token: string, tag: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const steps: string[] = [];
  const step = (name: string): string => {
    steps.push(name);
    return name;
  };

  const group = `WH-${tag}`;
  const source = { locationId: `A-01-01-${tag}`, erpCode: `E0101-${tag}` };
  const target = { locationId: `A-01-02-${tag}`, erpCode: `E0102-${tag}` };
  const transportUnitBK = `TU-1-${tag}`;
  const sku = `4711-${tag}`;

  // Master data: a LocationGroup, two Locations in it, a TransportUnit on the first.
  let name = step('put location groups');
  expectStatus(name, (await client.PUT('/v1/location-groups', { body: [{ name: group }] })).response, 204);
  name = step('put locations');
  const locations = [source, target].map((location) => ({ ...location, locationGroupName: group }));
  expectStatus(name, (await client.PUT('/v1/locations', { body: locations })).response, 204);
  name = step('create a transport unit');
  const created = await client.POST('/v1/transport-units', {
    body: { transportUnitBK, transportUnitType: 'PALLET', actualLocation: { erpCode: source.erpCode } },
  });
  expectStatus(name, created.response, 201);

  // Products: create one, find it by SKU and by pKey, replace it.
  name = step('create a product');
  const product = await client.POST('/v1/products', {
    body: [{ sku, label: 'Screws', baseUnit: pieces(1), units: [{ quantity: pieces(1, 'DOZ') }] }],
  });
  expectStatus(name, product.response, 201);
  const location = present(name, product.response.headers.get('Location'));

  name = step('find the product by SKU');
  const bySku = await client.GET('/v1/products', { params: { query: { sku } } });
  expectStatus(name, bySku.response, 200);
  const found = present(name, bySku.data);
  if (Array.isArray(found) || '_embedded' in found)
    throw new UnexpectedAnswer(`${name}: a list instead of the Product`);
  expectEqual(name, found.sku, sku);
  expectEqual(name, found._links.self.href, location);
  const pKey = found.pKey;

  name = step('get the product by pKey');
  const byPKey = await client.GET('/v1/products/{pKey}', { params: { path: { pKey } } });
  expectStatus(name, byPKey.response, 200);
  expectEqual(name, present(name, byPKey.data).label, 'Screws');

  name = step('replace the product');
  const replaced = await client.PUT('/v1/products', {
    body: {
      pKey,
      ol: found.ol,
      sku,
      label: 'Wood screws',
      baseUnit: pieces(1),
      units: [{ quantity: pieces(1, 'DOZ') }],
    },
  });
  expectStatus(name, replaced.response, 200);
  expectEqual(name, present(name, replaced.data).label, 'Wood screws');

  // PackagingUnits: 24 pieces into LoadUnit 1 of the TransportUnit (the LoadUnit is created on the spot),
  // 5 pieces lying on the first Location.
  name = step('create packaging units in a load unit');
  const inLoadUnit = await client.POST('/v1/transport-units/{transportUnitBK}/load-units/{luPos}/packaging-units', {
    params: { path: { transportUnitBK, luPos: '1' }, query: { loadUnitType: 'BOX' } },
    body: { packagingUnits: [{ product: { sku }, quantity: pieces(2, 'DOZ') }] },
  });
  expectStatus(name, inLoadUnit.response, 201);
  const unitInLoadUnit = present(name, present(name, inLoadUnit.data)[0]);
  const loadUnitPKey = present(name, unitInLoadUnit.loadUnit).pKey;

  name = step('create a packaging unit on a location');
  const onLocation = await client.POST('/v1/packaging-units', {
    body: [{ product: { sku }, quantity: pieces(5), actualLocation: { locationId: source.locationId } }],
  });
  expectStatus(name, onLocation.response, 201);
  // The operation also takes an NDJSON stock intake, which answers a count (D35): its 201 is either shape.
  const createdUnits = present(name, onLocation.data);
  const looseUnit = present(name, Array.isArray(createdUnits) ? createdUnits[0] : undefined);

  name = step('get a packaging unit');
  const unit = await client.GET('/v1/packaging-units/{pKey}', { params: { path: { pKey: looseUnit.pKey } } });
  expectStatus(name, unit.response, 200);
  expectEqual(name, present(name, unit.data).product.sku, sku);

  name = step('find the packaging units of the product');
  const ofProduct = await client.GET('/v1/packaging-units', {
    params: { query: { sku, sortDirection: 'ASC', sortProperty: 'createDt' } },
  });
  expectStatus(name, ofProduct.response, 200);
  const units = present(name, ofProduct.data);
  if (!Array.isArray(units)) throw new UnexpectedAnswer(`${name}: not the plain list`);
  expectEqual(name, units.length, 2);

  // The LoadUnit the first unit went into.
  name = step('list the load units of the transport unit');
  const loadUnits = await client.GET('/v1/transport-units/{transportUnitBK}/load-units', {
    params: { path: { transportUnitBK } },
  });
  expectStatus(name, loadUnits.response, 200);
  const listed = present(name, loadUnits.data);
  if (!Array.isArray(listed)) throw new UnexpectedAnswer(`${name}: not the plain list`);
  expectEqual(name, present(name, listed[0]).pKey, loadUnitPKey);

  name = step('get the load unit');
  const loadUnit = await client.GET('/v1/load-units/{pKey}', { params: { path: { pKey: loadUnitPKey } } });
  expectStatus(name, loadUnit.response, 200);
  expectEqual(name, present(name, loadUnit.data).physicalPosition, '1');

  name = step('list the packaging units in the load unit');
  const inIt = await client.GET('/v1/load-units/{pKey}/packaging-units', { params: { path: { pKey: loadUnitPKey } } });
  expectStatus(name, inIt.response, 200);
  const contents = present(name, inIt.data);
  if (!Array.isArray(contents)) throw new UnexpectedAnswer(`${name}: not the plain list`);
  expectEqual(name, present(name, contents[0]).pKey, unitInLoadUnit.pKey);

  // A move: 3 of the 5 loose pieces to the second Location (the answer is the new unit there).
  name = step('move part of a unit to another location');
  const moved = await client.PUT('/v1/packaging-units/{pKey}', {
    params: { path: { pKey: looseUnit.pKey } },
    body: { quantity: pieces(3), actualLocation: { locationId: target.locationId } },
  });
  expectStatus(name, moved.response, 200);
  expectEqual(name, present(name, present(name, moved.data).actualLocation).locationId, target.locationId);

  name = step('read the ledger of the unit');
  const ledger = await client.GET('/v1/packaging-units/{pKey}/movements', {
    params: { path: { pKey: looseUnit.pKey } },
  });
  expectStatus(name, ledger.response, 200);
  if (present(name, ledger.data).length < 2) throw new UnexpectedAnswer(`${name}: no movement recorded`);

  // An allocation of 10 pieces from the group, then its release.
  name = step('allocate');
  const allocation = await client.POST('/allocation/transport-units', {
    params: { query: { sourceLocationGroupNames: group, allowPartial: 'false' } },
    body: { sku, qty: pieces(10) },
  });
  expectStatus(name, allocation.response, 200);
  const reservation = present(name, present(name, allocation.data)[0]);
  expectEqual(name, reservation.sku, sku);

  name = step('release the reservation');
  const released = await client.DELETE('/allocation/reservations/{reservationId}', {
    params: { path: { reservationId: reservation.reservationId } },
  });
  expectStatus(name, released.response, 204);

  // Errors: an unknown SKU, and a SKU that exists already.
  name = step('find an unknown SKU');
  const unknown = await client.GET('/v1/products', { params: { query: { sku: `NO-SUCH-${tag}` } } });
  expectStatus(name, unknown.response, 404);
  const notFound = present(name, unknown.error);
  expectEqual(name, 'messageKey' in notFound ? notFound.messageKey : undefined, 'not.found');

  name = step('create a product twice');
  const twice = await client.POST('/v1/products', { body: [{ sku, baseUnit: pieces(1) }] });
  expectStatus(name, twice.response, 409);
  const conflict = present(name, twice.error);
  expectEqual(name, 'messageKey' in conflict ? conflict.messageKey : undefined, 'owms.wms.inv.product.alreadyExists');

  return steps;
}
